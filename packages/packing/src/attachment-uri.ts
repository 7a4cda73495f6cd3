const PREFIX = 'tributary://attachment/';
const SHAPE = /^tributary:\/\/attachment\/[^/]+\/\d+\/([^/]+)$/;

/**
 * Names an attachment that has no URI of its own: the event, the arrival index, the file name. It is an
 * identity, not a location; the agent cannot fetch it, but it can tell the attachments apart and name them.
 */
export function attachmentUri(eventId: string, index: number, name: string): string {
  return `${PREFIX}${encodeURIComponent(eventId)}/${index}/${encodeURIComponent(name)}`;
}

export function attachmentNameFromUri(uri: string): string {
  const encodedName = SHAPE.exec(uri)?.[1];
  if (encodedName === undefined) throw new Error(`not a ${PREFIX}<event>/<index>/<name> URI: ${uri}`);
  return decodeURIComponent(encodedName);
}
