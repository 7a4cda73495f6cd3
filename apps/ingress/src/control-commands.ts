import type { ControlCommand } from '@tributary/platforms';
import type { ThreadControls } from '@tributary/queue';

const COMMAND_TEXT = /^\s*\/(cancel-all|cancel|reset)(?:@(\S+))?\s*$/;

/**
 * A message whose whole text is a control command. Telegram addresses a command to one bot as
 * `/cancel@botname`: one addressed to another bot is not ours.
 */
export function parseControlText(text: string, selfId: string | undefined): ControlCommand | undefined {
  const match = COMMAND_TEXT.exec(text);
  if (!match) return undefined;
  const addressee = match[2];
  if (addressee !== undefined && addressee.toLowerCase() !== selfId?.toLowerCase()) return undefined;
  return match[1] as ControlCommand;
}

/** Applies a command (see ThreadControls) and returns the confirmation for the user. */
export async function applyControl(
  controls: ThreadControls,
  command: ControlCommand,
  thread: string,
): Promise<string> {
  switch (command) {
    case 'cancel': {
      const { wasRunning } = await controls.cancel(thread);
      return wasRunning
        ? 'Cancelling the running turn; messages waiting after it are kept.'
        : 'No turn is running; messages waiting are kept.';
    }
    case 'cancel-all': {
      const { dropped } = await controls.cancelAll(thread);
      return `Cancelled the running turn and dropped ${dropped} waiting message${dropped === 1 ? '' : 's'}.`;
    }
    case 'reset': {
      const { dropped } = (await controls.reset(thread)) ?? { dropped: 0 };
      return `Reset: dropped ${dropped} waiting message${dropped === 1 ? '' : 's'}; the next message starts a fresh agent session.`;
    }
  }
}
