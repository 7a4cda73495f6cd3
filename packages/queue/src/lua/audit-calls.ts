import { ok } from './decoders.js';
import { defineScript } from './scripts.js';

/** The audit log's script (its stream is written with XADD alone). */
export const auditComplete = defineScript({
  name: 'auditComplete',
  keys: ['outcomes', 'order'],
  args: ['id', 'outcome', 'keep'],
  decode(reply) {
    ok(reply);
  },
});
