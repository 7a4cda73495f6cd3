import { bulkAction } from '../actions.js';
import { api, seg } from '../api.js';
import { age, h, link, notice, pager, pill, show, table } from '../dom.js';

const STATES = ['all', 'running', 'runnable', 'scheduled', 'paused', 'idle'];
const ACTIONS = ['pause', 'resume', 'cancel', 'cancel-all', 'reset'];

export async function threadsView(main, query) {
  const state = query.get('state') ?? 'all';
  const cursors = [undefined];
  const selected = new Set();
  const status = h('div');

  const render = async () => {
    const cursor = cursors.at(-1);
    const page = await api(`/threads?state=${state}&limit=50${cursor ? `&cursor=${seg(cursor)}` : ''}`);
    selected.clear();
    show(
      main,
      h('h1', {}, 'Threads'),
      h(
        'div',
        { class: 'bar' },
        STATES.map((s) => (s === state ? h('strong', {}, s) : link(`#/threads?state=${s}`, s))),
      ),
      h(
        'div',
        { class: 'bar' },
        h('span', { class: 'muted' }, 'Selected:'),
        ACTIONS.map((action) =>
          h('button', { 'data-action': action, onclick: () => act(action, true) }, action),
        ),
        h('span', { class: 'muted' }, `All ${state}:`),
        ['pause', 'resume'].map((action) =>
          h('button', { 'data-bulk': action, onclick: () => act(action, false) }, `${action} all`),
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
                'aria-label': `select ${r.thread}`,
                onchange: (e) => (e.target.checked ? selected.add(r.thread) : selected.delete(r.thread)),
              }),
          ],
          ['Thread', (r) => link(`#/thread/${seg(r.thread)}`, r.thread)],
          ['State', (r) => [pill(r.status), r.paused ? pill('paused') : null]],
          ['Owner', (r) => r.owner ?? '—'],
          ['Lease', (r) => (r.leaseExpiresAt && r.status === 'running' ? age(r.leaseExpiresAt) : '—')],
          ['Backlog', (r) => r.backlog, { class: 'num' }],
          ['Since', (r) => age(r.since)],
        ],
        page.items,
        `No ${state} threads.`,
      ),
      pager(cursors, page.next, render),
    );
  };

  async function act(action, bySelection) {
    const items = bySelection ? [...selected].map((thread) => ({ thread })) : undefined;
    if (bySelection && items.length === 0) return show(status, notice('Select threads first.'));
    try {
      const { message } = await bulkAction({
        path: '/threads/actions',
        action,
        what: 'thread',
        items,
        filter: { state },
      });
      await render();
      show(status, notice(message));
    } catch (error) {
      show(status, notice(error.message, 'error'));
    }
  }

  await render();
}
