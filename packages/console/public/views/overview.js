import { api } from '../api.js';
import { age, h, pill, show, table } from '../dom.js';

/** How often the overview's counts are read again, without reloading the page. */
const REFRESH_MS = 2000;

const card = (label, value, href, bad = false) =>
  h(
    'a',
    { class: `card${bad && value > 0 ? ' bad' : ''}`, href, 'data-count': label },
    h('div', { class: 'n' }, value),
    h('div', { class: 'label' }, label),
  );

export async function overviewView(main) {
  const render = async () => {
    const o = await api('/overview');
    const t = o.threads;
    show(
      main,
      h('h1', {}, 'Fleet overview'),
      h(
        'div',
        { class: 'cards' },
        card('running', t.running, '#/threads?state=running'),
        card('runnable', t.runnable, '#/threads?state=runnable'),
        card('scheduled', t.scheduled, '#/threads?state=scheduled'),
        card('paused', t.paused, '#/threads?state=paused'),
        card('active threads', t.active, '#/threads?state=all'),
        card('backlog', o.backlog, '#/threads?state=runnable'),
        card('workers', o.workers.total, '#/workers'),
        card('sessions', o.workers.sessions, '#/workers'),
        card('dead letters', o.deadLetters.total, '#/dead-letters', true),
        card('dead replies', o.deadReplies.total, '#/dead-replies', true),
      ),
      h('h2', {}, 'Worker pools'),
      pools(o.pools),
      h('h2', {}, 'Dead letters by reason'),
      reasons(o.deadLetters.byReason, 'dead-letters'),
      h('h2', {}, 'Dead replies by reason'),
      reasons(o.deadReplies.byReason, 'dead-replies'),
      h('p', { class: 'muted', id: 'refreshed' }, `Live: read ${age(o.at)}, every ${REFRESH_MS / 1000} s.`),
    );
  };
  await render();
  const timer = setInterval(() => render().catch(() => {}), REFRESH_MS);
  return () => clearInterval(timer);
}

/** Each pool's workers and waiting threads; a pool whose threads wait with no worker is marked. */
function pools(items) {
  return table(
    [
      ['Pool', (p) => h('code', {}, p.pool)],
      ['Workers', (p) => p.workers, { class: 'num' }],
      ['Waiting', (p) => p.runnable, { class: 'num' }],
      ['Running', (p) => p.running, { class: 'num' }],
      ['', (p) => (p.workers === 0 && p.runnable > 0 ? pill('no worker: its threads wait', 'dead') : '')],
    ],
    items,
    'None.',
  );
}

function reasons(groups, kind) {
  return table(
    [
      ['Reason', (g) => h('a', { href: `#/${kind}?reason=${encodeURIComponent(g.reason)}` }, g.reason)],
      ['Count', (g) => g.count, { class: 'num' }],
    ],
    groups.slice(0, 10),
    'None.',
  );
}
