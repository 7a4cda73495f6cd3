import { ok } from './decoders.js';
import { defineScript } from './scripts.js';
import { ScriptStatus } from './status.js';

/** A route's slot taken (`limit` 0: the route has none), or none free and the thread in the line. */
export type TurnSlot = { taken: true; limit: number } | { taken: false; limit: number; waiting: number };

/** Per-route limits on concurrent turns across the fleet (docs/adr/0062): turn-slot-*.lua. */
export const turnSlotTake = defineScript({
  name: 'turnSlotTake',
  keys: ['limits', 'running', 'waiting'],
  args: ['route', 'thread', 'ttlMs'],
  decode(reply): TurnSlot {
    if (reply.status === ScriptStatus.Ok) return { taken: true, limit: reply.num(1) };
    if (reply.status === ScriptStatus.Busy)
      return { taken: false, limit: reply.num(1), waiting: reply.num(2) };
    throw reply.unexpected();
  },
});

export const turnSlotFree = defineScript({
  name: 'turnSlotFree',
  keys: ['running', 'waiting'],
  args: ['thread', 'reserveMs'],
  decode: (reply): string | undefined => ok(reply).str(1) || undefined,
});

export const TURN_LIMIT_SCRIPTS = [turnSlotTake, turnSlotFree];
