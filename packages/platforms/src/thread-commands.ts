/** A command that changes a thread: never enqueued as data, applied once per delivery. */
export type ControlCommand = 'cancel' | 'cancel-all' | 'reset';

/** Every command people can give a thread: its controls, and the questions answered at once. */
export type ThreadCommand = ControlCommand | 'status' | 'help';

export const THREAD_COMMANDS: readonly ThreadCommand[] = ['cancel', 'cancel-all', 'reset', 'status', 'help'];

/** What each command does, for /help and the platforms' command lists. */
export const COMMAND_DESCRIPTIONS: Readonly<Record<ThreadCommand, string>> = {
  cancel: 'Stop the running turn; messages waiting after it are kept.',
  'cancel-all': 'Stop the running turn and drop the messages waiting after it.',
  reset: 'Drop the waiting messages; the next message starts a fresh agent session.',
  status: "Show the conversation's state: running or idle, messages waiting, agent and session.",
  help: 'List these commands.',
};

export function isThreadCommand(name: string): name is ThreadCommand {
  return (THREAD_COMMANDS as readonly string[]).includes(name);
}

export function isControlCommand(command: ThreadCommand): command is ControlCommand {
  return command !== 'status' && command !== 'help';
}
