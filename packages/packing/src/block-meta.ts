/**
 * Keys the broker sets in a block's `_meta`, ACP's extension point: agents that do not know them ignore
 * them. They carry what text alone cannot: which text block is the broker's boundary (a user may type a
 * copy of one), and the fields an ACP block type has no place for, so a packed batch reads back exactly.
 */
export const META_PART = 'tributary/part';
export const META_NAME = 'tributary/name';
export const META_URI = 'tributary/uri';
export const META_MIME_TYPE = 'tributary/mimeType';

export type Part = 'sender_context' | 'attachment';
