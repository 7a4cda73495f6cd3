import { defineScript } from './scripts.js';
import { ScriptStatus } from './status.js';

/** A slot reserved (go after `waitMs`), or for a draft none free now (the next in `waitMs`). */
export type PaceSlot = { reserved: true; waitMs: number } | { reserved: false; waitMs: number };

/** The fleet's write pacer: one budget per place a platform limits (pace-reserve-1.lua). */
export const paceReserve = defineScript({
  name: 'paceReserve',
  keys: ['tat'],
  args: ['intervalMs', 'burst', 'draft'],
  decode(reply): PaceSlot {
    if (reply.status === ScriptStatus.Ok) return { reserved: true, waitMs: reply.num(1) };
    if (reply.status === ScriptStatus.Busy) return { reserved: false, waitMs: reply.num(1) };
    throw reply.unexpected();
  },
});
