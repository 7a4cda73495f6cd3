import type { PromptCapabilities } from '@agentclientprotocol/sdk';
import type { ArrivalEvent, Attachment, LinkAttachment } from '@tributary/packing';
import {
  FileFetchError,
  type FileFetchFailure,
  fileTooLarge,
  formatBytes,
  PlatformApiError,
  type PlatformClient,
} from '@tributary/platforms';
import type { Logger } from 'pino';
import { fileContent, worthFetching } from './attachment-file.js';
import type { BudgetHold, ByteBudget } from './byte-budget.js';

export interface AttachmentLimits {
  /** Largest file downloaded. */
  maxBytes: number;
  /** Files downloaded per turn. */
  maxCount: number;
  /**
   * File content one prompt carries, counted as it travels (base64 media, text as JSON strings): the
   * whole prompt is one message of the agent connection, whose size the agent limits.
   */
  maxTurnBytes: number;
  /** All of one turn's downloads, together (they run a few at a time). */
  timeoutMs: number;
}

/**
 * `fetched`, or why a file reached the agent as a link and a note: FileFetchFailure, `too_many` (the
 * count), `turn_full` (the prompt's share for files), `busy` (the worker's budget did not free in time),
 * `timed_out` (the turn's download time ran out), `unsupported` (downloaded, neither text nor media the
 * agent takes).
 */
export type AttachmentOutcome =
  | 'fetched'
  | FileFetchFailure
  | 'too_many'
  | 'turn_full'
  | 'busy'
  | 'timed_out'
  | 'unsupported';

export interface AttachmentContentsDeps {
  clients: ReadonlyMap<string, PlatformClient>;
  limits: AttachmentLimits;
  /** Bytes this worker's turns may hold for files at once. */
  budget: ByteBudget;
  logger: Logger;
  onOutcome?: (platform: string, outcome: AttachmentOutcome) => void;
}

/** Events with their files' content, and the worker's budget they hold until `release`. */
export interface ResolvedAttachments {
  events: ArrivalEvent[];
  /** The agent has the prompt (or the turn ended): the files' bytes are no longer held for it. */
  release(): void;
}

/** Downloads of one turn in flight at once: enough to overlap slow hosts, few enough to stay polite. */
const DOWNLOADS_AT_ONCE = 4;

type LinkWithSource = LinkAttachment & Required<Pick<LinkAttachment, 'source'>>;

/** One file of the turn to download, at its place among the events' attachments. */
interface Wanted {
  event: ArrivalEvent;
  link: LinkWithSource;
  at: [event: number, attachment: number];
  /** What it may add to the prompt, from its declared size and type (the budget held for it). */
  estimate: number;
}

type Fetched =
  | { kind: 'content'; attachment: Attachment; promptBytes: number; hold: BudgetHold }
  | { kind: 'link'; attachment: LinkAttachment };

/**
 * Turns the platform files a batch's events link to into content the agent can read, for one turn
 * attempt: the bytes live in this process only, so a re-delivered batch downloads them again and Redis
 * never holds them. Images become image attachments and audio audio ones when the agent takes them,
 * text files text attachments; other files stay links. Bounded end to end: at most `maxCount` files,
 * each at most `maxBytes`, together at most `maxTurnBytes` of the prompt, within one `timeoutMs` for
 * all of a turn's downloads, and within the worker's byte budget across its turns. A file past any
 * of these, or that cannot be fetched, stays a link with a broker-origin note saying why; the turn goes
 * ahead either way.
 */
export class AttachmentContents {
  constructor(private readonly deps: AttachmentContentsDeps) {}

  /** `signal`: the turn's; once it aborts, the files not yet downloaded stay links (the turn is ending). */
  async resolve(
    events: readonly ArrivalEvent[],
    caps: PromptCapabilities,
    signal?: AbortSignal,
  ): Promise<ResolvedAttachments> {
    const resolved = events.map((event) => ({ ...event, attachments: [...event.attachments] }));
    const wanted = this.wanted(resolved, caps);
    if (wanted.length === 0) return { events: resolved, release: () => {} };
    const deadline = AbortSignal.timeout(this.deps.limits.timeoutMs);
    const stop = signal ? AbortSignal.any([signal, deadline]) : deadline;
    const fetched = await inTurns(wanted, DOWNLOADS_AT_ONCE, (file) => this.fetch(file, caps, stop, signal));
    // Earliest first: the files that fit the prompt's share are the first ones sent.
    const holds: BudgetHold[] = [];
    let promptBytes = 0;
    for (const [i, result] of fetched.entries()) {
      const { event, link, at } = wanted[i]!;
      let attachment: Attachment = result.attachment;
      if (result.kind === 'content') {
        if (promptBytes + result.promptBytes > this.deps.limits.maxTurnBytes) {
          result.hold.release();
          attachment = this.refuse(event, link, 'turn_full', this.turnFull(promptBytes));
        } else {
          promptBytes += result.promptBytes;
          holds.push(result.hold);
        }
      }
      resolved[at[0]]!.attachments[at[1]] = attachment;
    }
    const release = () => {
      for (const hold of holds.splice(0)) hold.release();
    };
    return { events: resolved, release };
  }

  /**
   * The files to download, earliest first, as many as the limits let through by their declared sizes;
   * the others (declared too large, too many, past the prompt's share) get their note now, undownloaded.
   */
  private wanted(events: ArrivalEvent[], caps: PromptCapabilities): Wanted[] {
    const { maxBytes, maxCount, maxTurnBytes } = this.deps.limits;
    const wanted: Wanted[] = [];
    let planned = 0;
    for (const [e, event] of events.entries()) {
      for (const [a, link] of event.attachments.entries()) {
        if (!hasSource(link) || !worthFetching(link, caps)) continue;
        const { size } = link.source;
        const estimate = promptEstimate(link, size ?? maxBytes);
        // A file declared too large is refused before it takes one of the turn's downloads.
        if (size !== undefined && size > maxBytes) {
          event.attachments[a] = this.refuse(event, link, 'too_large', fileTooLarge(maxBytes).message);
        } else if (wanted.length >= maxCount) {
          const reason = `the turn already carries ${maxCount} downloaded files`;
          event.attachments[a] = this.refuse(event, link, 'too_many', reason);
        } else if (planned + estimate > maxTurnBytes && wanted.length > 0) {
          event.attachments[a] = this.refuse(event, link, 'turn_full', this.turnFull(planned));
        } else {
          planned += estimate;
          wanted.push({ event, link, at: [e, a], estimate });
        }
      }
    }
    return wanted;
  }

  private async fetch(
    { event, link, estimate }: Wanted,
    caps: PromptCapabilities,
    stop: AbortSignal,
    turn: AbortSignal | undefined,
  ): Promise<Fetched> {
    const { platform, ref } = link.source;
    const { source: _source, ...plain } = link;
    const note = (outcome: AttachmentOutcome, reason: string): Fetched => ({
      kind: 'link',
      attachment: this.refuse(event, link, outcome, reason),
    });
    // Stopped by the turn's end, not refused: nothing to tell the agent.
    const stopped = (): Fetched | undefined =>
      turn?.aborted ? { kind: 'link', attachment: plain } : undefined;
    const client = this.deps.clients.get(platform);
    if (client?.fetchFile === undefined) {
      return note('refused', `no ${platform} credentials to download it with`);
    }
    const { maxBytes, timeoutMs } = this.deps.limits;
    let hold: BudgetHold;
    try {
      hold = await this.deps.budget.take(estimate, stop);
    } catch {
      return (
        stopped() ??
        note('busy', "this worker's other turns hold all the memory it keeps for files; send it again later")
      );
    }
    try {
      const limits = { maxBytes, timeoutMs, signal: stop };
      const { bytes } = await client.fetchFile(ref, limits, event.workspaceId);
      const content = await fileContent(plain, bytes, caps);
      if (content.kind === 'unsupported') {
        hold.release();
        this.deps.onOutcome?.(platform, 'unsupported');
        return {
          kind: 'link',
          attachment: this.noted(event, link, 'unsupported', unsupported(content.type)),
        };
      }
      hold.shrink(content.promptBytes);
      this.deps.onOutcome?.(platform, 'fetched');
      return { kind: 'content', attachment: content.attachment, promptBytes: content.promptBytes, hold };
    } catch (error) {
      hold.release();
      const interrupted = stopped();
      if (interrupted) return interrupted;
      if (stop.aborted) {
        return note('timed_out', `the turn's downloads took longer than ${Math.round(timeoutMs / 1000)} s`);
      }
      if (error instanceof FileFetchError) return note(error.failure, error.message);
      if (error instanceof PlatformApiError) return note('failed', error.message);
      throw error;
    }
  }

  private turnFull(promptBytes: number): string {
    const limit = formatBytes(this.deps.limits.maxTurnBytes);
    return `the files before it already take ${formatBytes(promptBytes)} of the ${limit} one prompt carries; send it again on its own`;
  }

  private refuse(
    event: ArrivalEvent,
    link: LinkWithSource,
    outcome: AttachmentOutcome,
    reason: string,
  ): LinkAttachment {
    this.deps.onOutcome?.(link.source.platform, outcome);
    return this.noted(event, link, outcome, `Tributary could not fetch this file for the agent: ${reason}.`);
  }

  private noted(
    event: ArrivalEvent,
    link: LinkWithSource,
    outcome: AttachmentOutcome,
    notice: string,
  ): LinkAttachment {
    this.deps.logger.warn(
      { platform: link.source.platform, eventId: event.eventId, attachment: link.name, outcome, notice },
      'attachment not passed to the agent as content; it gets a link and a note',
    );
    const { source: _source, ...plain } = link;
    return { ...plain, notice };
  }
}

/** Base64 makes media a third larger in the prompt than on the platform; text is about its size. */
function promptEstimate(link: LinkAttachment, bytes: number): number {
  const type = link.mimeType?.toLowerCase() ?? '';
  return type.startsWith('image/') || type.startsWith('audio/') ? Math.ceil((bytes * 4) / 3) : bytes;
}

function unsupported(type: string): string {
  return `Tributary downloaded this file but did not pass it to the agent: it is ${type}, neither text nor media the agent takes.`;
}

function hasSource(attachment: Attachment): attachment is LinkWithSource {
  return attachment.kind === 'link' && attachment.source !== undefined;
}

/** `work` over `items`, at most `width` at once, results in the items' order. */
async function inTurns<T, R>(
  items: readonly T[],
  width: number,
  work: (item: T) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await work(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, lane));
  return results;
}
