import { ok } from './decoders.js';
import { defineScript, type Reply } from './scripts.js';

/** A doorbell let in to the shared queue from its route's line. */
export interface LetIn {
  member: string;
  epoch: number;
}

function letIn(reply: Reply): LetIn[] {
  ok(reply);
  const due: LetIn[] = [];
  for (let at = 1; at + 1 < reply.length; at += 2)
    due.push({ member: reply.str(at), epoch: reply.num(at + 1) });
  return due;
}

const LINE_KEYS = ['weights', 'admitted', 'line', 'epochs', 'limits', 'running'] as const;

/** Weighted fair dispatch between routes, within their turn limits (docs/adr/0063, 0064): route-line-*.lua. */
export const routeLineRing = defineScript({
  name: 'routeLineRing',
  keys: [...LINE_KEYS, 'routes'],
  args: ['route', 'member', 'epoch', 'base', 'ttlMs', 'toldMs'],
  decode: letIn,
});

export const routeLineMove = defineScript({
  name: 'routeLineMove',
  keys: LINE_KEYS,
  args: ['route', 'left', 'base', 'ttlMs', 'toldMs', 'graceMs'],
  decode: letIn,
});

export const ROUTE_LINE_SCRIPTS = [routeLineRing, routeLineMove];
