import { api, seg } from '../api.js';
import { h, link, show, table } from '../dom.js';

/** Where a platform message went, in whichever threads took one by that id. */
export async function messageView(main, messageId) {
  let found = [];
  try {
    found = (await api(`/messages/${seg(messageId)}`)).items;
  } catch (error) {
    if (error.status !== 404) throw error;
  }
  show(
    main,
    h('h1', {}, `Message ${messageId}`),
    table(
      [
        ['Thread', (r) => link(`#/thread/${seg(r.thread)}`, r.thread)],
        ['Status', (r) => [r.status, r.paused ? ' (paused: no turn starts until resumed)' : '']],
        ['Batch', (r) => (r.batch ? `${r.batch.id ?? '—'} ${r.batch.outcome}` : '—')],
        [
          'Details',
          (r) =>
            [
              r.reason,
              r.editsInPlace ? `${r.editsInPlace} edits in place` : '',
              r.deletedAfterDispatch ? 'deleted after dispatch' : '',
            ]
              .filter(Boolean)
              .join(' · '),
        ],
      ],
      found,
      'No thread keeps a receipt of a message by that id.',
    ),
  );
}
