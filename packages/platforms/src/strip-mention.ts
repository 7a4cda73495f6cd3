/**
 * Removes every match of the regular expression source `mention`, with the blanks that separated it
 * from the rest (after it, or before it when it ends the text), so "<@U1> hi" and "hi <@U1>" both
 * become "hi". Nothing else is touched.
 */
export function stripMention(text: string, mention: string, flags = ''): string {
  return text.replace(new RegExp(`(?:${mention})[ \\t]*|[ \\t]+(?:${mention})$`, `g${flags}`), '');
}

export function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
}
