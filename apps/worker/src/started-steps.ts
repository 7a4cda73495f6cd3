import type { Logger } from 'pino';

/** What a start has set up so far: undone in reverse order when a later step fails. */
export class StartedSteps {
  private readonly undos: (() => unknown)[] = [];

  constructor(private readonly logger: Logger) {}

  undoWith(undo: () => unknown): void {
    this.undos.push(undo);
  }

  /** Undoes every step; one that fails to undo is logged and the rest still are. */
  async undo(): Promise<void> {
    for (const undo of this.undos.reverse()) {
      try {
        await undo();
      } catch (error) {
        this.logger.warn({ err: error }, 'a failed start left something it could not undo');
      }
    }
  }
}
