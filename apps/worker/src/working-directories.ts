import { mkdir, rm } from 'node:fs/promises';
import { type CwdRetention, cwdTemplateRoot, expandCwdTemplate, hasPlaceholder } from '@tributary/config';
import type { Logger } from 'pino';

/**
 * The working directory of each conversation, from the `AGENT_CWD` template: created on demand before
 * the thread's session opens, and (with `delete-on-reset`) deleted when the thread was reset, so its
 * fresh session starts in an empty directory. A template without placeholders is one shared directory.
 */
export class WorkingDirectories {
  constructor(
    private readonly template: string,
    private readonly retention: CwdRetention,
    private readonly logger: Logger,
  ) {}

  /** Where agent processes start, before they hold any thread's session. */
  get root(): string {
    return cwdTemplateRoot(this.template);
  }

  of(thread: string): string {
    return expandCwdTemplate(this.template, thread);
  }

  /** The thread's directory, created if missing. */
  async ready(thread: string): Promise<string> {
    const dir = this.of(thread);
    await mkdir(dir, { recursive: true });
    return dir;
  }

  /** Called once a thread's reset is noticed, before its fresh session opens. */
  async reset(thread: string): Promise<void> {
    if (this.retention !== 'delete-on-reset' || !hasPlaceholder(this.template, 'thread')) return;
    const dir = this.of(thread);
    await rm(dir, { recursive: true, force: true });
    this.logger.info({ thread, cwd: dir }, 'working directory of a reset thread deleted');
  }
}
