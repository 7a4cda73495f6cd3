import { singleAction } from '../actions.js';
import { api, seg } from '../api.js';
import { age, h, notice, pill, show, table, time } from '../dom.js';

/** Who sent a message, from its arrival event (the body the queue keeps, as JSON). */
function sender(message) {
  const s = message.body?.sender;
  return s ? `${s.displayName || s.name || s.id}${s.isBot ? ' (bot)' : ''}` : message.origin;
}

const text = (message) => message.body?.text ?? (typeof message.body === 'string' ? message.body : '');

/** A thread's timeline: its batches with their messages and replies, dead letters, replies waiting. */
export async function threadView(main, thread) {
  const status = h('div');
  const path = `/threads/${seg(thread)}`;

  const render = async () => {
    const r = await api(path);
    const s = r.state;
    show(
      main,
      h('h1', {}, thread),
      h(
        'div',
        { class: 'bar' },
        pill(s.status),
        s.paused ? pill('paused') : null,
        h('span', {}, `backlog ${s.backlog}`),
        s.owner ? h('span', {}, `owner ${s.owner}`) : null,
        s.status === 'running' ? h('span', {}, `lease ${age(s.leaseExpiresAt)}`) : null,
        h('span', { class: 'muted' }, `generation ${s.generation}`),
      ),
      h(
        'div',
        { class: 'bar' },
        ['pause', 'resume', 'cancel', 'cancel-all', 'reset'].map((action) =>
          h(
            'button',
            { 'data-action': action, onclick: () => act(`${path}/${action}`, `${action} ${thread}?`) },
            action,
          ),
        ),
      ),
      status,
      h('h2', {}, 'Session'),
      r.session
        ? h(
            'p',
            {},
            h('code', {}, r.session.sessionId),
            ` on ${r.session.worker}, saved `,
            time(r.session.savedAt),
            ` · ${r.session.agent} in ${r.session.cwd}`,
          )
        : h('p', { class: 'muted' }, 'No agent session recorded.'),
      h('h2', {}, 'Timeline'),
      h('ol', { class: 'timeline' }, timeline(r)),
    );
  };

  function timeline(r) {
    const entries = [
      ...r.history.map((b) => ({ at: b.endedAt, node: batchEntry(b) })),
      ...r.deadLetters.map((d) => ({ at: d.deadAt, node: deadEntry(d) })),
      ...r.pendingReplies.map((p) => ({ at: p.at, node: replyEntry(p, 'waiting for delivery') })),
      ...r.deadReplies.map((p) => ({ at: p.deadAt, node: replyEntry(p, 'dead', true) })),
    ];
    if (entries.length === 0) return [h('li', { class: 'muted' }, 'Nothing recorded yet.')];
    return entries.sort((a, b) => a.at.localeCompare(b.at)).map((e) => e.node);
  }

  function messagesOf(batch) {
    return table(
      [
        ['Sender', sender],
        ['Message', text],
        ['Accepted', (m) => time(m.at)],
        [
          'Receipt',
          (m) => h('button', { 'data-receipt': m.id, onclick: (e) => receipt(m.id, e.target) }, 'receipt'),
        ],
      ],
      batch.messages,
    );
  }

  function batchEntry(b) {
    const prompt = h('div');
    return h(
      'li',
      { class: `batch ${b.status}`, 'data-batch': b.batchId },
      h(
        'div',
        { class: 'bar' },
        h('strong', {}, `Batch ${b.batchId}`),
        pill(b.status),
        h('span', { class: 'muted' }, `${b.type}, delivery ${b.deliveries}, `),
        time(b.claimedAt),
        '→',
        time(b.endedAt),
      ),
      messagesOf(b),
      b.reason ? h('p', { class: 'error' }, b.reason) : null,
      b.reply !== undefined
        ? h(
            'div',
            { class: 'reply' },
            h('p', { class: 'muted' }, `Reply (${b.stopReason}):`),
            h('pre', {}, b.reply),
          )
        : null,
      h(
        'button',
        { 'data-prompt': b.batchId, onclick: (e) => packed(b.batchId, prompt, e.target) },
        'packed prompt',
      ),
      prompt,
    );
  }

  function deadEntry(d) {
    return h(
      'li',
      { class: 'dead', 'data-dead-letter': d.batchId },
      h('div', { class: 'bar' }, h('strong', {}, `Dead letter ${d.batchId}`), pill('dead'), time(d.deadAt)),
      h('p', { class: 'error' }, d.reason),
      messagesOf(d),
      h(
        'div',
        { class: 'bar' },
        h(
          'button',
          {
            onclick: () =>
              act(`${path}/dead-letters/${seg(d.batchId)}/redrive`, `Re-drive dead letter ${d.batchId}?`),
          },
          're-drive',
        ),
        h(
          'button',
          {
            class: 'danger',
            onclick: () =>
              act(
                `${path}/dead-letters/${seg(d.batchId)}/discard`,
                `Discard dead letter ${d.batchId} for good?`,
              ),
          },
          'discard',
        ),
      ),
    );
  }

  function replyEntry(p, state, dead = false) {
    return h(
      'li',
      { class: dead ? 'dead' : 'reply' },
      h(
        'div',
        { class: 'bar' },
        h('strong', {}, `Reply ${p.id}`),
        pill(state, dead ? 'dead' : 'running'),
        `${p.attempts} attempts`,
        p.lastError ? h('span', { class: 'error' }, p.lastError) : null,
      ),
      h('pre', {}, p.payload?.text ?? JSON.stringify(p.payload, null, 2)),
      dead
        ? h(
            'div',
            { class: 'bar' },
            h(
              'button',
              { onclick: () => act(`${path}/dead-replies/${seg(p.id)}/redrive`, `Re-drive reply ${p.id}?`) },
              're-drive',
            ),
            h(
              'button',
              {
                class: 'danger',
                onclick: () =>
                  act(`${path}/dead-replies/${seg(p.id)}/discard`, `Discard reply ${p.id} for good?`),
              },
              'discard',
            ),
          )
        : null,
    );
  }

  async function packed(batchId, into, button) {
    const answer = await api(`${path}/batches/${seg(batchId)}`);
    button.remove();
    show(
      into,
      h('p', { class: 'muted' }, 'The prompt these messages pack into (docs/adr/0003):'),
      (answer.prompt ?? []).map((block) =>
        h('pre', { class: 'block' }, block.type === 'text' ? block.text : JSON.stringify(block, null, 2)),
      ),
    );
  }

  async function receipt(messageId, button) {
    try {
      const r = await api(`${path}/messages/${seg(messageId)}`);
      button.replaceWith(
        h(
          'code',
          {},
          [
            r.status,
            r.batch ? `${r.batch.outcome} ${r.batch.id ?? ''}` : '',
            r.paused ? 'paused' : '',
            r.reason ?? '',
          ]
            .filter(Boolean)
            .join(' · '),
        ),
      );
    } catch (error) {
      button.replaceWith(h('span', { class: 'muted' }, error.message));
    }
  }

  async function act(actionPath, question) {
    try {
      const { message } = await singleAction(actionPath, question);
      await render();
      show(status, notice(message));
    } catch (error) {
      show(status, notice(error.message, 'error'));
    }
  }

  await render();
}
