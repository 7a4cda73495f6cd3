import { api } from './api.js';
import { confirmAction } from './confirm.js';

/**
 * A bulk action from the console: for a filter, a dry run first says how many items it matches; the
 * operator confirms; then the API acts and answers each item's outcome.
 */
export async function bulkAction({ path, action, what, items, filter }) {
  let count = items?.length;
  if (!items) {
    const dry = await api(path, { method: 'POST', body: { action, ...filter, dryRun: true } });
    count = dry.matched;
    if (count === 0) return { cancelled: true, message: `Nothing matches; nothing to ${action}.` };
  }
  const sure = await confirmAction(`${action} ${count} ${what}${count === 1 ? '' : 's'}?`);
  if (!sure) return { cancelled: true, message: 'Cancelled; nothing was changed.' };
  const answer = await api(path, { method: 'POST', body: { action, ...(items ? { items } : filter) } });
  const { done, absent } = answer.result;
  const more = answer.truncated ? ' More match: run it again for the rest.' : '';
  return { answer, message: `${action}: ${done} done${absent ? `, ${absent} already gone` : ''}.${more}` };
}

/** One action on one item, after a confirmation. */
export async function singleAction(path, text) {
  if (!(await confirmAction(text))) return { cancelled: true, message: 'Cancelled; nothing was changed.' };
  const answer = await api(path, { method: 'POST' });
  return { answer, message: answer.result };
}
