import { defineScript } from './scripts.js';
import { ScriptStatus } from './status.js';

/** How a settle went: done, or the request was settled before (how), or is gone. */
export type Settled =
  | { settled: true }
  | { settled: false; state: string; optionId: string; by: string }
  | { settled: false; state: 'gone' };

/** approval-decide-1.lua */
export const approvalDecide = defineScript({
  name: 'approvalDecide',
  keys: ['approval'],
  args: ['state', 'optionId', 'by'],
  decode(reply): Settled {
    if (reply.status === ScriptStatus.Ok) return { settled: true };
    if (reply.status === ScriptStatus.NotFound) return { settled: false, state: 'gone' };
    if (reply.status === ScriptStatus.Busy) {
      return { settled: false, state: reply.str(1), optionId: reply.str(2), by: reply.str(3) };
    }
    throw reply.unexpected();
  },
});
