import { singleAction } from '../actions.js';
import { api, seg } from '../api.js';
import { age, h, link, notice, pill, show, table } from '../dom.js';

/** The workers as they report themselves: what they run, their sessions and agent processes. */
export async function workersView(main) {
  const status = h('div');
  const render = async () => {
    const { items } = await api('/workers');
    show(
      main,
      h('h1', {}, 'Workers'),
      status,
      table(
        [
          ['Worker', (w) => h('code', {}, w.owner)],
          ['Pool', (w) => h('code', {}, w.pool)],
          ['State', (w) => pill(w.state, w.state === 'taking' ? 'complete' : 'paused')],
          ['Running', (w) => w.running.map((t) => h('div', {}, link(`#/thread/${seg(t)}`, t)))],
          [
            'Sessions',
            (w) =>
              w.sessions.map((s) =>
                h('div', {}, link(`#/thread/${seg(s.thread)}`, s.thread), ` pid ${s.pid ?? '—'}`),
              ),
          ],
          [
            'Agent processes',
            (w) => w.agentProcesses.map((p) => `${p.pid} (${p.sessions})`).join(', ') || '—',
          ],
          ['Slots', (w) => `${w.running.length}/${w.concurrency}`, { class: 'num' }],
          ['Up since', (w) => age(w.startedAt)],
          [
            '',
            (w) =>
              w.state === 'taking'
                ? h('button', { 'data-drain': w.owner, onclick: () => drain(w.owner) }, 'drain')
                : '',
          ],
        ],
        items,
        'No worker reports.',
      ),
    );
  };
  async function drain(owner) {
    try {
      const { message } = await singleAction(
        `/workers/${seg(owner)}/drain`,
        `Drain ${owner}? It stops taking turns and hands its threads back.`,
      );
      await render();
      show(status, notice(message));
    } catch (error) {
      show(status, notice(error.message, 'error'));
    }
  }
  await render();
  const timer = setInterval(() => render().catch(() => {}), 2000);
  return () => clearInterval(timer);
}
