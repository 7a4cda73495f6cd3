/**
 * The two loads of bench/scale.ts, both sending signed gateway webhooks to the ingress processes in
 * turn over kept-alive connections and timing each acknowledgement:
 * - closed: every thread is a user who sends one message, waits for the reply to it, and sends the
 *   next at once; with more threads than turn slots the fleet is saturated, and the turn rate is
 *   what it can do;
 * - open: chat-like bursts of 1-4 messages a few hundred ms apart, starting at random times (a Poisson
 *   process) on random threads, at an average rate whatever the replies: the turn rate follows the
 *   load, and latency and agent churn are what it shows.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Pool } from 'undici';
import { gatewayEventBody, gatewayWebhook } from '../gateway-event.js';
import { postWebhook } from '../load.js';

export interface LoadTarget {
  ingressUrls: string[];
  threads: number;
  /** Prefix of every event id, so no two configurations of a run share one. */
  run: string;
  /** Kept-alive connections to each ingress process. */
  connections: number;
}

export interface RunningLoad {
  /** Acknowledgement latencies (ms) since the last call. */
  takeLatencies(): number[];
  /** Requests answered 503 and sent again so far. */
  readonly retried: number;
  /** Called by the gateway stub with the event id each reply answers. */
  replied(eventId: string): void;
  /** Stops sending and waits for the requests in flight; throws the first failure, if any. */
  stop(): Promise<void>;
}

/** A sender shared by both loads: ingress processes in turn, latencies and failures kept. */
function sender({ ingressUrls, connections }: LoadTarget) {
  const pools = ingressUrls.map((origin) => ({
    origin,
    pool: new Pool(origin, { connections, pipelining: 1 }),
  }));
  let next = 0;
  let latencies: number[] = [];
  let retried = 0;
  let failure: unknown;
  return {
    async send(id: string, thread: string, text: string): Promise<void> {
      const { pool, origin } = pools[next++ % pools.length]!;
      try {
        const answered = await postWebhook(
          pool,
          origin,
          gatewayWebhook(gatewayEventBody({ id, thread, text })),
          true,
        );
        latencies.push(answered.ms);
        retried += answered.retried;
      } catch (error) {
        failure ??= error;
        throw error;
      }
    },
    takeLatencies() {
      const taken = latencies;
      latencies = [];
      return taken;
    },
    get retried() {
      return retried;
    },
    async close() {
      await Promise.all(pools.map(({ pool }) => pool.close()));
      if (failure !== undefined) throw failure;
    },
  };
}

const threadName = (t: number) => `t-${t}`;

export function closedLoad(target: LoadTarget): RunningLoad {
  const send = sender(target);
  const waiting = new Map<string, () => void>();
  let stopped = false;
  const user = async (t: number) => {
    for (let n = 0; !stopped; n++) {
      const id = `${target.run}-${t}-${n}`;
      const answered = new Promise<void>((resolve) => waiting.set(`evt-${id}`, resolve));
      await send.send(id, threadName(t), `message ${n}: is the build green yet?`);
      await answered;
    }
  };
  const users = Array.from({ length: target.threads }, (_, t) => user(t));
  return {
    takeLatencies: send.takeLatencies,
    get retried() {
      return send.retried;
    },
    replied(eventId) {
      const resolve = waiting.get(eventId);
      waiting.delete(eventId);
      resolve?.();
    },
    async stop() {
      stopped = true;
      for (const resolve of waiting.values()) resolve();
      waiting.clear();
      await Promise.allSettled(users);
      await send.close();
    },
  };
}

/** A small seeded generator (mulberry32), so every run sends the same bursts at the same times. */
function seededRandom(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const BURST = { min: 1, max: 4, gapMinMs: 200, gapMaxMs: 800 };

export function openLoad(target: LoadTarget, messagesPerSecond: number): RunningLoad {
  const send = sender(target);
  const random = seededRandom(31);
  const inFlight = new Set<Promise<void>>();
  const meanBurst = (BURST.min + BURST.max) / 2;
  let stopped = false;
  let burst = 0;
  const post = (id: string, thread: string, text: string) => {
    const sending = send.send(id, thread, text).catch(() => undefined);
    inFlight.add(sending);
    void sending.finally(() => inFlight.delete(sending));
  };
  const typeBurst = async (b: number) => {
    // The first bursts go to each thread once, so every thread has a session early in the warm-up.
    const t = b < target.threads ? b : Math.floor(random() * target.threads);
    const size = BURST.min + Math.floor(random() * (BURST.max - BURST.min + 1));
    for (let m = 0; m < size && !stopped; m++) {
      if (m > 0) await sleep(BURST.gapMinMs + random() * (BURST.gapMaxMs - BURST.gapMinMs));
      post(`${target.run}-${b}-${m}`, threadName(t), `burst ${b}, line ${m}: is the build green yet?`);
    }
  };
  const arrivals = (async () => {
    const bursts = new Set<Promise<void>>();
    while (!stopped) {
      const typing = typeBurst(burst++);
      bursts.add(typing);
      void typing.finally(() => bursts.delete(typing));
      await sleep((-Math.log(1 - random()) * 1000 * meanBurst) / messagesPerSecond);
    }
    await Promise.all(bursts);
  })();
  return {
    takeLatencies: send.takeLatencies,
    get retried() {
      return send.retried;
    },
    replied: () => {},
    async stop() {
      stopped = true;
      await arrivals;
      await Promise.all(inFlight);
      await send.close();
    },
  };
}
