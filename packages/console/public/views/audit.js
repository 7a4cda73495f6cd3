import { api, seg } from '../api.js';
import { h, pager, show, table, time } from '../dom.js';

/** The operators' actions, newest first. */
export async function auditView(main) {
  const cursors = [undefined];
  const render = async () => {
    const cursor = cursors.at(-1);
    const page = await api(`/audit?limit=50${cursor ? `&cursor=${seg(cursor)}` : ''}`);
    show(
      main,
      h('h1', {}, 'Audit log'),
      table(
        [
          ['When', (e) => time(e.at)],
          ['Who', (e) => e.actor],
          ['What', (e) => h('code', {}, e.action)],
          ['On', (e) => h('code', {}, JSON.stringify(e.target))],
          ['Result', (e) => (typeof e.result === 'string' ? e.result : JSON.stringify(e.result))],
        ],
        page.items,
        'No action recorded yet.',
      ),
      pager(cursors, page.next, render, { back: '← Newer', forward: 'Older →' }),
    );
  };
  await render();
}
