import { api } from './api.js';
import { confirmAction } from './confirm.js';

/**
 * A bulk action from the console: for a filter, a dry run first says how many items it matches; the
 * operator confirms; then the API acts and answers each item's outcome. A filter is scanned a bounded
 * part per request, each going on from the cursor the one before answered.
 */
export async function bulkAction({ path, action, what, items, filter }) {
  let count = items?.length;
  if (!items) {
    count = 0;
    for await (const dry of rounds(path, { action, ...filter, dryRun: true })) count += dry.matched;
    if (count === 0) return { cancelled: true, message: `Nothing matches; nothing to ${action}.` };
  }
  const sure = await confirmAction(`${action} ${count} ${what}${count === 1 ? '' : 's'}?`);
  if (!sure) return { cancelled: true, message: 'Cancelled; nothing was changed.' };
  let answer;
  let done = 0;
  let absent = 0;
  for await (answer of rounds(path, { action, ...(items ? { items } : filter) })) {
    done += answer.result.done;
    absent += answer.result.absent;
  }
  return { answer, message: `${action}: ${done} done${absent ? `, ${absent} already gone` : ''}.` };
}

/** The answers of a bulk request and of those that go on from its `next`, until none is left. */
async function* rounds(path, body) {
  let cursor;
  do {
    const answer = await api(path, { method: 'POST', body: cursor ? { ...body, cursor } : body });
    yield answer;
    cursor = answer.next;
  } while (cursor);
}

/** One action on one item, after a confirmation. */
export async function singleAction(path, text) {
  if (!(await confirmAction(text))) return { cancelled: true, message: 'Cancelled; nothing was changed.' };
  const answer = await api(path, { method: 'POST' });
  return { answer, message: answer.result };
}
