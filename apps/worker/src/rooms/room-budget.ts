import type { WorkspaceOnReset } from '@tributary/config';
import type { Logger } from 'pino';
import type { ThreadRooms } from './thread-rooms.js';

/**
 * Entries one measurement looks at: a checkout with its dependencies has some tens of thousands, so
 * the walk after a turn stays well under a second; past it the room counts as at least what was seen.
 */
const MAX_ENTRIES = 200_000;

const MB = 1024 * 1024;

function megabytes(bytes: number): string {
  return `${(bytes / MB).toFixed(bytes < 10 * MB ? 1 : 0)} MB`;
}

/** Raised before a turn of a thread whose room is over its budget: the batch waits, kept. */
export class RoomOverBudget extends Error {
  override name = 'RoomOverBudget';

  constructor(
    readonly bytes: number,
    readonly budgetBytes: number,
    /** What the thread is told while its messages wait. */
    readonly notice: string,
  ) {
    super(`the thread's workspace and agent home take ${bytes} bytes, over its budget of ${budgetBytes}`);
  }
}

export interface RoomBudgetOptions {
  rooms: ThreadRooms;
  /** 0: no budget; rooms are still measured, for the workspace metrics. */
  budgetBytes: number;
  /** Whether `/reset` frees the room, which decides what the thread is told to do. */
  onReset: WorkspaceOnReset;
  /** Counts turns that ended over the budget. */
  onOver: () => void;
}

/**
 * A thread's disk budget (docs/adr/0046): its room is measured after every turn that reached the
 * agent; one that ended over the budget tells the thread, and its next turns wait (their batches put
 * back, never set aside) until the room is back under it.
 */
export class RoomBudget {
  constructor(private readonly options: RoomBudgetOptions) {}

  /**
   * After a turn the agent ran: records the room's size, and returns what the thread is told when it
   * is over the budget. A room that cannot be measured is logged and checked after the next turn.
   */
  async afterTurn(thread: string, log: Logger): Promise<string | undefined> {
    const { rooms, budgetBytes } = this.options;
    let bytes: number;
    try {
      bytes = await this.#measure(thread);
    } catch (error) {
      log.warn(
        { err: error },
        "the thread's room was not measured; its disk budget is checked after its next turn",
      );
      return undefined;
    }
    if (!this.#over(bytes)) return undefined;
    this.options.onOver();
    log.warn(
      { bytes, budgetBytes, room: rooms.dirOf(thread) },
      "the thread's workspace and agent home are over its disk budget; its next turns wait until they are cleaned",
    );
    return `⚠️ This thread's files now take ${megabytes(bytes)}, more than the ${megabytes(budgetBytes)} it may use. Its next messages will wait, kept, until they are cleaned up: ${this.#remedy()}`;
  }

  /**
   * Before a turn uses the room: throws RoomOverBudget while the room is over the budget. Only a room
   * whose last measurement was over it is walked again, so a turn of a thread within it pays one read.
   */
  async admit(thread: string): Promise<void> {
    const recorded = await this.options.rooms.recorded(thread);
    if (recorded === undefined || !this.#over(recorded.bytes)) return;
    const bytes = await this.#measure(thread);
    if (!this.#over(bytes)) return;
    throw new RoomOverBudget(
      bytes,
      this.options.budgetBytes,
      `⏳ These messages are waiting because this thread's files take ${megabytes(bytes)}, more than the ${megabytes(this.options.budgetBytes)} it may use. They are kept and will be answered once the files are cleaned up: ${this.#remedy()}`,
    );
  }

  async #measure(thread: string): Promise<number> {
    const { bytes } = await this.options.rooms.measure(thread, MAX_ENTRIES);
    await this.options.rooms.record(thread, bytes);
    return bytes;
  }

  #over(bytes: number): boolean {
    return this.options.budgetBytes > 0 && bytes > this.options.budgetBytes;
  }

  #remedy(): string {
    return this.options.onReset === 'delete'
      ? 'send /reset to start afresh without them (the waiting messages are dropped too), or ask an operator to make room.'
      : "ask an operator to make room in this thread's workspace.";
  }
}
