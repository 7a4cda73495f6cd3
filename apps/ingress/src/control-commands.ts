import type { ControlCommand, ThreadCommand } from '@tributary/platforms';
import type { ThreadControls } from '@tributary/queue';

const COMMAND_TEXT = /^\s*\/(cancel[-_]all|cancel|reset|status|help)(?:@(\S+))?\s*$/;

/**
 * A message whose whole text is a command. Telegram addresses a command to one bot as
 * `/cancel@botname`: one addressed to another bot is not ours. Telegram's command names cannot hold a
 * `-`, so `/cancel_all` is `/cancel-all` too.
 */
export function parseCommandText(text: string, selfId: string | undefined): ThreadCommand | undefined {
  const match = COMMAND_TEXT.exec(text);
  if (!match) return undefined;
  const addressee = match[2];
  if (addressee !== undefined && addressee.toLowerCase() !== selfId?.toLowerCase()) return undefined;
  return match[1]!.replace('_', '-') as ThreadCommand;
}

/**
 * Applies a command (see ThreadControls) for `delivery`, the idempotency key of the message or
 * interaction that asked, and returns the confirmation for the user; 'duplicate' when that delivery
 * was applied before (a platform's retry): nothing was done again.
 */
export async function applyControl(
  controls: ThreadControls,
  command: ControlCommand,
  thread: string,
  delivery: string,
): Promise<{ confirmation: string } | 'duplicate'> {
  switch (command) {
    case 'cancel': {
      const cancelled = await controls.cancel(thread, delivery);
      if (cancelled === 'duplicate') return cancelled;
      return {
        confirmation: cancelled.wasRunning
          ? 'Cancelling the running turn; messages waiting after it are kept.'
          : 'No turn is running; messages waiting are kept.',
      };
    }
    case 'cancel-all': {
      const cancelled = await controls.cancelAll(thread, delivery);
      if (cancelled === 'duplicate') return cancelled;
      return {
        confirmation: `Cancelled the running turn and dropped ${waiting(cancelled.dropped)}.`,
      };
    }
    case 'reset': {
      const reset = (await controls.reset(thread, delivery)) ?? { dropped: 0 };
      if (reset === 'duplicate') return reset;
      return {
        confirmation: `Reset: dropped ${waiting(reset.dropped)}; the next message starts a fresh agent session.`,
      };
    }
  }
}

/** What a platform that answers a command inline (Discord) shows for a redelivery of one applied before. */
export function alreadyApplied(command: ThreadCommand): string {
  return `/${command} was applied already; nothing was done again.`;
}

function waiting(dropped: number): string {
  return `${dropped} waiting message${dropped === 1 ? '' : 's'}`;
}
