import type { LinkAttachment } from '@tributary/packing';
import { compact, type JsonFields } from '../json-body.js';

// Media a message may carry, each an object with a file_id; photo is handled apart (an array of sizes).
const FILE_KINDS = ['document', 'audio', 'voice', 'video', 'animation', 'video_note', 'sticker'];

/**
 * Telegram files as links. The URI names the file by its file_id only: a download URL would contain
 * the bot token, which must never leave the broker.
 */
export function telegramFiles(message: JsonFields): LinkAttachment[] {
  const files: LinkAttachment[] = [];
  // Sizes are listed smallest first; the last is the original.
  const photo = message.objects('photo').at(-1);
  if (photo !== undefined) files.push({ ...fileLink(photo, 'photo'), mimeType: 'image/jpeg' });
  for (const kind of FILE_KINDS) {
    const file = message.optionalObject(kind);
    if (file !== undefined) files.push(fileLink(file, kind));
  }
  return files;
}

/** The file_id is also the source a worker resolves with getFile and downloads, token and all, itself. */
function fileLink(file: JsonFields, kind: string): LinkAttachment {
  const fileId = file.nonEmptyString('file_id');
  return {
    kind: 'link',
    uri: `tg://file/${encodeURIComponent(fileId)}`,
    name: file.optionalString('file_name') || kind,
    mimeType: file.optionalString('mime_type') || undefined,
    source: compact({ platform: 'telegram', ref: fileId, size: file.optionalInteger('file_size') }),
  };
}
