// A few DOM helpers: elements are built with textContent only, so no API text is ever parsed as HTML.

/** `h('td', { class: 'num' }, 'text', child)`: an element; `on*` attributes become listeners. */
export function h(tag, attrs = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith('on')) element.addEventListener(name.slice(2), value);
    else element.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    element.append(child instanceof Node ? child : String(child));
  }
  return element;
}

/** A table of `rows`; each column is [heading, row => cell content, attributes]. */
export function table(columns, rows, empty = 'Nothing here.') {
  if (rows.length === 0) return h('p', { class: 'muted' }, empty);
  return h(
    'table',
    {},
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        columns.map(([heading, , attrs]) => h('th', attrs ?? {}, heading)),
      ),
    ),
    h(
      'tbody',
      {},
      rows.map((row) =>
        h(
          'tr',
          {},
          columns.map(([, cell, attrs]) => h('td', attrs ?? {}, cell(row))),
        ),
      ),
    ),
  );
}

/** An ISO-8601 time as the reader's local time, the exact value on hover. */
export function time(iso) {
  if (!iso) return h('span', { class: 'muted' }, '—');
  return h('time', { datetime: iso, title: iso }, new Date(iso).toLocaleString());
}

/** How long ago (or in how long) an ISO-8601 time is. */
export function age(iso) {
  if (!iso) return '—';
  const seconds = Math.round((Date.now() - Date.parse(iso)) / 1000);
  const abs = Math.abs(seconds);
  const text =
    abs < 90 ? `${abs} s` : abs < 5400 ? `${Math.round(abs / 60)} min` : `${Math.round(abs / 3600)} h`;
  return seconds >= 0 ? `${text} ago` : `in ${text}`;
}

export const pill = (text, kind = text) => h('span', { class: `pill ${kind}` }, text);

export const link = (href, text) => h('a', { href }, text);

/** Replaces `node`'s content. */
export function show(node, ...children) {
  node.replaceChildren(...children.flat().filter((c) => c !== undefined && c !== null && c !== false));
}

/** A message shown where the action was taken. */
export function notice(text, kind = 'notice') {
  return h('p', { class: kind, role: 'status' }, text);
}

/**
 * The buttons that page through a cursor-paginated list: `cursors` holds the cursor of each page shown
 * so far (the first is null), `next` the following page's (null on the last), `render` draws again.
 */
export function pager(cursors, next, render, labels = { back: '← Previous', forward: 'Next →' }) {
  const step = (move) => () => {
    move();
    render();
  };
  return h(
    'div',
    { class: 'bar' },
    cursors.length > 1 ? h('button', { onclick: step(() => cursors.pop()) }, labels.back) : null,
    next ? h('button', { onclick: step(() => cursors.push(next)) }, labels.forward) : null,
  );
}
