import type { PromptCapabilities } from '@agentclientprotocol/sdk';
import type { ArrivalEvent, Attachment, LinkAttachment } from '@tributary/packing';
import {
  FileFetchError,
  type FileFetchFailure,
  fileTooLarge,
  PlatformApiError,
  type PlatformClient,
} from '@tributary/platforms';
import { fileTypeFromBuffer } from 'file-type';
import type { Logger } from 'pino';

export interface AttachmentLimits {
  /** Largest file downloaded. */
  maxBytes: number;
  /** Files downloaded per turn. */
  maxCount: number;
  timeoutMs: number;
}

export type AttachmentOutcome = 'fetched' | FileFetchFailure | 'too_many';

export interface AttachmentContentsDeps {
  clients: ReadonlyMap<string, PlatformClient>;
  limits: AttachmentLimits;
  logger: Logger;
  onOutcome?: (platform: string, outcome: AttachmentOutcome) => void;
}

// Malformed UTF-8 is not text: such a file stays a link rather than reach the agent altered.
const UTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Turns the platform files a batch's events link to into content the agent can read, for one turn
 * attempt: the bytes live in this process only, so a re-delivered batch downloads them again and Redis
 * never holds them. Images become image attachments and audio audio ones when the agent takes them,
 * text files text attachments; other files stay links. A file that cannot be fetched stays a link with
 * a broker-origin notice saying why; the turn goes ahead either way.
 */
export class AttachmentContents {
  constructor(private readonly deps: AttachmentContentsDeps) {}

  /** `signal`: the turn's; once it aborts, the files not yet downloaded stay links (the turn is ending). */
  async resolve(
    events: readonly ArrivalEvent[],
    caps: PromptCapabilities,
    signal?: AbortSignal,
  ): Promise<ArrivalEvent[]> {
    let budget = this.deps.limits.maxCount;
    const take = () => budget-- > 0;
    const resolved: ArrivalEvent[] = [];
    // One file after another: the count cap goes to the earliest files.
    for (const event of events) {
      if (!event.attachments.some(hasSource)) {
        resolved.push(event);
        continue;
      }
      const attachments: Attachment[] = [];
      for (const attachment of event.attachments) {
        attachments.push(
          hasSource(attachment) && worthFetching(attachment, caps) && !signal?.aborted
            ? await this.content(event, attachment, caps, take, signal)
            : attachment,
        );
      }
      resolved.push({ ...event, attachments });
    }
    return resolved;
  }

  private async content(
    event: ArrivalEvent,
    link: LinkWithSource,
    caps: PromptCapabilities,
    take: () => boolean,
    signal: AbortSignal | undefined,
  ): Promise<Attachment> {
    const { platform, ref, size } = link.source;
    const { maxBytes, maxCount } = this.deps.limits;
    const { source: _source, ...plain } = link;
    const refuse = (outcome: AttachmentOutcome, reason: string): LinkAttachment => {
      this.deps.onOutcome?.(platform, outcome);
      this.deps.logger.warn(
        { platform, eventId: event.eventId, attachment: link.name, outcome, reason },
        'attachment not fetched; the agent gets a link and a note',
      );
      return { ...plain, notice: `Tributary could not fetch this file for the agent: ${reason}.` };
    };
    // A file declared too large is refused before it takes one of the turn's downloads.
    if (size !== undefined && size > maxBytes) {
      return refuse('too_large', fileTooLarge(maxBytes).message);
    }
    if (!take()) return refuse('too_many', `the turn already carries ${maxCount} downloaded files`);
    const client = this.deps.clients.get(platform);
    if (client?.fetchFile === undefined) {
      return refuse('refused', `no ${platform} credentials to download it with`);
    }
    let bytes: Buffer;
    try {
      const { timeoutMs } = this.deps.limits;
      ({ bytes } = await client.fetchFile(ref, { maxBytes, timeoutMs, ...(signal ? { signal } : {}) }));
    } catch (error) {
      // Stopped by the turn's end, not refused by the platform: nothing to tell the agent.
      if (signal?.aborted) return plain;
      if (error instanceof FileFetchError) return refuse(error.failure, error.message);
      if (error instanceof PlatformApiError) return refuse('failed', error.message);
      throw error;
    }
    this.deps.onOutcome?.(platform, 'fetched');
    return (await fileContent(plain, bytes, caps)) ?? plain;
  }
}

type LinkWithSource = LinkAttachment & Required<Pick<LinkAttachment, 'source'>>;

function hasSource(attachment: Attachment): attachment is LinkWithSource {
  return attachment.kind === 'link' && attachment.source !== undefined;
}

/**
 * Only what the agent could take as content is downloaded: by the declared type, images when it takes
 * images, audio when it takes audio, text and files of unknown type always; video and documents stay links.
 */
function worthFetching(link: LinkAttachment, caps: PromptCapabilities): boolean {
  const type = link.mimeType?.toLowerCase() ?? '';
  if (type.startsWith('image/')) return caps.image === true;
  if (type.startsWith('audio/')) return caps.audio === true;
  return type === '' || type === 'application/octet-stream' || isTextType(type);
}

function isTextType(type: string): boolean {
  return (
    type.startsWith('text/') ||
    /^application\/(?:json|xml|yaml|x-yaml|toml|javascript|x-sh|x-python|sql|csv)\b/.test(type) ||
    /\+(?:json|xml)\b/.test(type)
  );
}

/**
 * What the bytes are, by their magic numbers, not by the name or the type the sender's client claimed;
 * undefined when they are nothing the agent can take as content.
 */
async function fileContent(
  link: LinkAttachment,
  bytes: Buffer,
  caps: PromptCapabilities,
): Promise<Attachment | undefined> {
  const sniffed = await fileTypeFromBuffer(bytes);
  if (sniffed !== undefined) {
    const data = bytes.toString('base64');
    if (sniffed.mime.startsWith('image/') && caps.image) {
      return { kind: 'image', mimeType: sniffed.mime, data, name: link.name };
    }
    if (sniffed.mime.startsWith('audio/') && caps.audio) {
      return { kind: 'audio', mimeType: sniffed.mime, data, name: link.name };
    }
    return undefined;
  }
  const text = utf8(bytes);
  if (text === undefined) return undefined;
  const declared = link.mimeType?.toLowerCase();
  const mimeType = declared !== undefined && isTextType(declared) ? link.mimeType! : 'text/plain';
  return { kind: 'text', name: link.name, mimeType, text };
}

/** The text of UTF-8 bytes without NUL characters (which binary formats have and text does not). */
function utf8(bytes: Buffer): string | undefined {
  if (bytes.includes(0)) return undefined;
  try {
    return UTF8.decode(bytes);
  } catch {
    return undefined;
  }
}
