/** Plain-text tables for `tributary admin`: one row per item, columns padded to their widest cell. */
export type Column<T> = [heading: string, cell: (item: T) => unknown];

export function formatTable<T>(columns: Column<T>[], items: readonly T[]): string {
  const cells = items.map((item) => columns.map(([, cell]) => text(cell(item))));
  const widths = columns.map(([heading], i) =>
    Math.max(heading.length, ...cells.map((row) => row[i]!.length)),
  );
  const line = (row: string[]) =>
    row
      .map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(columns.map(([heading]) => heading.toUpperCase())), ...cells.map(line)].join('\n');
}

function text(value: unknown): string {
  if (value === null || value === undefined) return '-';
  if (Array.isArray(value)) return value.map(text).join(',') || '-';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value).replace(/\s+/g, ' ');
}
