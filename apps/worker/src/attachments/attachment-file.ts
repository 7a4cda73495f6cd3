import type { PromptCapabilities } from '@agentclientprotocol/sdk';
import type { Attachment, LinkAttachment } from '@tributary/packing';
import { fileTypeFromBuffer } from 'file-type';

// Malformed UTF-8 is not text: such a file stays a link rather than reach the agent altered.
const UTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Only what the agent could take as content is downloaded: by the declared type, images when it takes
 * images, audio when it takes audio, text and files of unknown type always; video and documents stay links.
 */
export function worthFetching(link: LinkAttachment, caps: PromptCapabilities): boolean {
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

/** What a download became: content the agent takes, or why it stays a link. */
export type FileContent =
  | { kind: 'content'; attachment: Attachment; promptBytes: number }
  | { kind: 'unsupported'; type: string };

/**
 * What the bytes are, by their magic numbers, not by the name or the type the sender's client claimed.
 * `promptBytes`: what the content adds to the prompt as it travels to the agent (base64 for media, text
 * as a JSON string), the measure of the agent connection's message limit.
 */
export async function fileContent(
  link: LinkAttachment,
  bytes: Buffer,
  caps: PromptCapabilities,
): Promise<FileContent> {
  const sniffed = await fileTypeFromBuffer(bytes);
  if (sniffed !== undefined) {
    const media =
      (sniffed.mime.startsWith('image/') && caps.image && ('image' as const)) ||
      (sniffed.mime.startsWith('audio/') && caps.audio && ('audio' as const));
    if (!media) return { kind: 'unsupported', type: sniffed.mime };
    const data = bytes.toString('base64');
    return {
      kind: 'content',
      attachment: { kind: media, mimeType: sniffed.mime, data, name: link.name },
      promptBytes: data.length,
    };
  }
  const text = utf8(bytes);
  if (text === undefined) return { kind: 'unsupported', type: 'binary data' };
  const declared = link.mimeType?.toLowerCase();
  const mimeType = declared !== undefined && isTextType(declared) ? link.mimeType! : 'text/plain';
  return {
    kind: 'content',
    attachment: { kind: 'text', name: link.name, mimeType, text },
    promptBytes: jsonStringBytes(text),
  };
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

/**
 * UTF-8 bytes of `text` as a JSON string, counted without building it (a 10 MB file would be copied
 * once more): quotes and backslashes take two bytes, control characters two or six, the rest their
 * UTF-8 length (a surrogate pair four).
 */
export function jsonStringBytes(text: string): number {
  let bytes = 2;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x20) bytes += code === 8 || code === 9 || code === 10 || code === 12 || code === 13 ? 2 : 6;
    else if (code === 0x22 || code === 0x5c) bytes += 2;
    else if (code < 0x80) bytes += 1;
    else if (code < 0x800) bytes += 2;
    else if (code >= 0xd800 && code <= 0xdbff && isLowSurrogate(text.charCodeAt(i + 1))) {
      bytes += 4;
      i++;
    } else if (code >= 0xd800 && code <= 0xdfff) bytes += 6;
    else bytes += 3;
  }
  return bytes;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}
