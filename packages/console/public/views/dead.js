import { bulkAction } from '../actions.js';
import { api, seg } from '../api.js';
import { h, link, notice, pager, show, table, time } from '../dom.js';

/** Dead letters or dead replies: grouped by reason, listed newest first, acted on in bulk. */
export async function deadView(main, kind, query) {
  const reason = query.get('reason') ?? undefined;
  const key = kind === 'dead-letters' ? 'batchId' : 'id';
  const title = kind === 'dead-letters' ? 'Dead letters' : 'Dead replies';
  const what = kind === 'dead-letters' ? 'dead letter' : 'dead reply';
  const cursors = [undefined];
  const selected = new Map();
  const status = h('div');

  const render = async () => {
    const cursor = cursors.at(-1);
    const params = new URLSearchParams({ limit: '50' });
    if (cursor) params.set('cursor', cursor);
    if (reason) params.set('reason', reason);
    const page = await api(`/${kind}?${params}`);
    selected.clear();
    const filter = reason ? { reason } : { all: true };
    show(
      main,
      h('h1', {}, title, reason ? ` — ${reason}` : ''),
      h('h2', {}, `By reason (${page.total} in all)`),
      table(
        [
          [
            'Reason',
            (g) =>
              g.reason === reason
                ? h('strong', {}, g.reason)
                : link(`#/${kind}?reason=${encodeURIComponent(g.reason)}`, g.reason),
          ],
          ['Count', (g) => g.count, { class: 'num' }],
        ],
        page.groups,
        'None.',
      ),
      reason ? h('p', {}, link(`#/${kind}`, 'All reasons')) : null,
      h(
        'div',
        { class: 'bar' },
        h(
          'button',
          { 'data-action': 'redrive-selected', onclick: () => act('redrive', true, filter) },
          'Re-drive selected',
        ),
        h(
          'button',
          { 'data-action': 'discard-selected', class: 'danger', onclick: () => act('discard', true, filter) },
          'Discard selected',
        ),
        h(
          'button',
          { 'data-action': 'redrive-all', onclick: () => act('redrive', false, filter) },
          reason ? 'Re-drive all with this reason' : 'Re-drive all',
        ),
        h(
          'button',
          { 'data-action': 'discard-all', class: 'danger', onclick: () => act('discard', false, filter) },
          reason ? 'Discard all with this reason' : 'Discard all',
        ),
      ),
      status,
      table(
        [
          [
            '',
            (r) =>
              h('input', {
                type: 'checkbox',
                'aria-label': `select ${r[key]}`,
                onchange: (e) =>
                  e.target.checked
                    ? selected.set(`${r.thread}\n${r[key]}`, { thread: r.thread, [key]: r[key] })
                    : selected.delete(`${r.thread}\n${r[key]}`),
              }),
          ],
          ['Thread', (r) => link(`#/thread/${seg(r.thread)}`, r.thread)],
          [kind === 'dead-letters' ? 'Batch' : 'Reply', (r) => h('code', {}, r[key])],
          ['Reason', (r) => r.reason],
          [
            kind === 'dead-letters' ? 'Messages' : 'Attempts',
            (r) => (kind === 'dead-letters' ? r.messages : r.attempts),
            { class: 'num' },
          ],
          ['Died', (r) => time(r.deadAt)],
        ],
        page.items,
        `No ${title.toLowerCase()}.`,
      ),
      pager(cursors, page.next, render),
    );
  };

  async function act(action, bySelection, filter) {
    const items = bySelection ? [...selected.values()] : undefined;
    if (bySelection && items.length === 0)
      return show(status, notice(`Select ${title.toLowerCase()} first.`));
    try {
      const { message } = await bulkAction({ path: `/${kind}/actions`, action, what, items, filter });
      await render();
      show(status, notice(message));
    } catch (error) {
      show(status, notice(error.message, 'error'));
    }
  }

  await render();
}
