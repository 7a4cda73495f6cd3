import type { LogSink } from '@tributary/observability';
import { waitFor } from '@tributary/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Batch } from '../src/batch.js';
import type { QueueConfig } from '../src/queue-config.js';
import { Runner, type RunnerEvents, type RunnerOptions } from '../src/runner.js';
import { keysOf } from '../src/testing.js';
import { workerKeys } from '../src/thread-keys.js';
import { type ThreadQueue, threadQueue } from '../src/threads/thread-queue.js';
import type { TurnHandler } from '../src/turn-loop.js';
import { type Doorbell, doorbellJobId, parseDirectDoorbell } from '../src/wake/doorbell.js';
import { PRESENCE } from '../src/worker-presence.js';
import { done, noReplies, type QueueFixture, queueFixture, turnAs } from './fixture.js';

let f: QueueFixture;
beforeAll(async () => {
  f = await queueFixture();
});
afterAll(() => f.close());

type Presence = (typeof PRESENCE)[keyof typeof PRESENCE];

/** A thread waits for its worker longer than any test runs, and the sweeper does not step in. */
const LONG_WAIT = { affinityWaitMs: 60_000, lostDoorbellAfterMs: 120_000 };

async function announce(queue: ThreadQueue, owner: string, value: Presence, ttlMs = 60_000) {
  await f.redis.set(workerKeys(queue.config.prefix, owner).presence, value, 'PX', ttlMs);
}

const directList = async (queue: ThreadQueue, owner: string) =>
  (await f.redis.lrange(workerKeys(queue.config.prefix, owner).doorbells, 0, -1)).map(parseDirectDoorbell);

/**
 * A busy owner's list, once it holds `count` doorbells: a pop the owner began while a slot was free
 * takes a doorbell pushed meanwhile and puts it back when it finds the slot taken.
 */
const heldBy = (queue: ThreadQueue, owner: string, count: number) =>
  waitFor(
    async () => {
      const list = await directList(queue, owner);
      return list.length === count ? list : undefined;
    },
    { what: `${count} doorbell(s) in ${owner}'s list` },
  );

describe('ringing with session affinity', () => {
  it('hands the doorbell to the last owner while it takes doorbells, with no shared one beside it', async () => {
    const { queue, doorbell } = await f.make(LONG_WAIT);
    await turnAs(queue, 'th', 'w1');
    await announce(queue, 'w1', PRESENCE.taking);
    await queue.intake.enqueue('th', { id: 'm2', body: 'x' });
    const { epoch } = await queue.admin.state('th');

    expect(await directList(queue, 'w1')).toEqual([{ thread: 'th', epoch }]);
    // The owner passes it on itself if it waits too long (pass-on); no shared job stands beside it.
    expect(
      await (await doorbell.queueOf('th')).getJob(doorbellJobId(keysOf(queue, 'th').member, epoch)),
    ).toBeUndefined();
    // The one shared job is the warm-up turn's (a new thread's ring), claimed by hand and stale.
    expect(await doorbell.jobCounts()).toMatchObject({ waiting: 1, delayed: 0 });
    expect(await doorbell.pending(keysOf(queue, 'th').member, epoch - 1)).toBe(true);
  });

  it('hands every ring of a thread to its last owner from the caller, and follows a change of owner', async () => {
    const { queue, doorbell } = await f.make(LONG_WAIT);
    const rings: string[] = [];
    const ring = doorbell.ring.bind(doorbell);
    doorbell.ring = (thread, member, epoch, options) => {
      rings.push(options?.prefer ? 'preferring' : 'shared');
      return ring(thread, member, epoch, options);
    };
    await announce(queue, 'w1', PRESENCE.taking);
    await announce(queue, 'w2', PRESENCE.taking);
    const directOf = (owner: string) => directList(queue, owner);
    const turnOn = async (owner: string, id: string) => {
      await queue.intake.enqueue('th', { id, body: 'x' });
      const { epoch } = await queue.admin.state('th');
      const claim = await queue.turns.claim('th', epoch, owner);
      if (claim.kind !== 'batch') throw new Error('no batch');
      await queue.turns.commit(claim.batch.lease, done);
      return epoch;
    };

    // A new thread has no last owner: its ring goes to the shared queue.
    await turnAs(queue, 'th', 'w1');
    expect(rings).toEqual(['shared']);
    // Each later ring names w1, the last owner, and is handed to it (the affinity push script).
    const second = await turnOn('w1', 'm2');
    const third = await turnOn('w1', 'm3');
    expect(rings).toEqual(['shared', 'preferring', 'preferring']);
    expect(await directOf('w1')).toEqual([
      { thread: 'th', epoch: second },
      { thread: 'th', epoch: third },
    ]);
    expect(await doorbell.jobCounts()).toMatchObject({ waiting: 1, delayed: 0 });

    // w2 ran the last turn: the next ring prefers w2.
    await turnAs(queue, 'th', 'w2');
    await queue.intake.enqueue('th', { id: 'm4', body: 'x' });
    const fourth = (await queue.admin.state('th')).epoch;
    expect(rings.at(-1)).toBe('preferring');
    expect(await directOf('w2')).toEqual([{ thread: 'th', epoch: fourth }]);
    expect((await directOf('w1')).map((d) => d.epoch)).not.toContain(fourth);
  });

  it.each<[string, Presence | undefined]>([
    ['is gone', undefined],
    ['is shutting down', PRESENCE.retiring],
  ])('rings the shared queue at once when the last owner %s', async (_, presence) => {
    const { queue, doorbell } = await f.make();
    await turnAs(queue, 'th', 'w1');
    if (presence) await announce(queue, 'w1', presence);
    await queue.intake.enqueue('th', { id: 'm2', body: 'x' });
    const { epoch } = await queue.admin.state('th');

    expect(await directList(queue, 'w1')).toEqual([]);
    const job = await (await doorbell.queueOf('th')).getJob(doorbellJobId(keysOf(queue, 'th').member, epoch));
    expect(job?.data).toMatchObject({ thread: 'th', epoch });
    expect(await job?.getState()).toBe('waiting');
  });

  it('rings the shared queue, for any worker, when affinity is off', async () => {
    const { queue, doorbell } = await f.make({ affinity: false });
    await turnAs(queue, 'th', 'w1');
    await announce(queue, 'w1', PRESENCE.taking);
    await queue.intake.enqueue('th', { id: 'm2', body: 'x' });
    const { epoch } = await queue.admin.state('th');

    expect(await directList(queue, 'w1')).toEqual([]);
    expect(await doorbell.pending(keysOf(queue, 'th').member, epoch)).toBe(true);
    // The warm-up turn's doorbell (claimed by hand) still waits too, stale: a worker's claim of it is a no-op.
    expect(await doorbell.jobCounts()).toMatchObject({ waiting: 2, delayed: 0 });
  });
});

describe('turn runners with session affinity', () => {
  const started: Runner[] = [];
  afterAll(() => Promise.all(started.map((r) => r.close())));

  type Made = Awaited<ReturnType<QueueFixture['make']>>;

  async function runner(
    { queue, doorbell }: Pick<Made, 'queue'> & { doorbell: Doorbell },
    handler: TurnHandler,
    concurrency = 2,
    events?: RunnerEvents,
    logger?: LogSink,
  ) {
    const r = new Runner({
      queue,
      doorbell,
      connection: f.redis,
      handler,
      replies: noReplies,
      concurrency,
      events,
      logger,
    });
    await r.start();
    started.push(r);
    return r;
  }

  it('keeps a thread on the worker that ran its last turn, one ring after another', async () => {
    const made = await f.make(LONG_WAIT);
    const { queue, doorbell } = made;
    const owners: string[] = [];
    const handler: TurnHandler = async (batch) => {
      owners.push(batch.lease.owner);
      return done;
    };
    await Promise.all([runner(made, handler), runner(made, handler), runner(made, handler)]);
    for (let i = 1; i <= 8; i++) {
      await queue.intake.enqueue('th', { id: `m${i}`, body: 'x' });
      await waitFor(async () => (await queue.admin.history('th')).length === i, { what: `turn ${i}` });
      await waitFor(async () => (await queue.admin.state('th')).status === 'idle', { what: 'idle' });
    }
    // With a 60 s affinity wait, a turn that did not go to its preferred worker would not finish here.
    expect(new Set(owners.slice(1))).toEqual(new Set([owners[0]]));
    // Served directly: no shared doorbell was added, so none is left to fire later.
    expect(await doorbell.jobCounts()).toMatchObject({ waiting: 0, delayed: 0 });
  });

  it('keeps a thread for its busy last owner, which runs it when a slot frees, while another worker idles', async () => {
    const { queue, a, letGo, keptTurns, ran } = await busyOwner(LONG_WAIT);
    // B is free, but the thread's session lives in A: A was handed the doorbell, which it passes on
    // only after the affinity wait (a minute here), so B cannot take the thread.
    expect(await heldBy(queue, a.owner, 1)).toEqual([
      { thread: 'kept', epoch: (await queue.admin.state('kept')).epoch },
    ]);
    letGo.shift()!();
    await waitFor(() => keptTurns().length === 2, { what: 'the kept thread again' });
    expect(keptTurns()).toEqual([a.owner, a.owner]);
    expect(new Set(ran.map((r) => r.owner))).toEqual(new Set([a.owner]));
  });

  /**
   * Runner A busy with a `long` turn (one slot) after running `kept`, and runner B, free; then `kept`
   * rings again. `ofA` sets A's own doorbell and logger; both runners report to `events`.
   */
  async function busyOwner(
    config: Partial<QueueConfig>,
    ofA: Partial<Pick<RunnerOptions, 'doorbell' | 'logger'>> = {},
    events: RunnerEvents = {},
  ) {
    const made = await f.make(config);
    const { queue } = made;
    const letGo: (() => void)[] = [];
    const ran: { thread: string; owner: string }[] = [];
    const handler: TurnHandler = async (batch) => {
      ran.push({ thread: batch.lease.thread, owner: batch.lease.owner });
      // Only the first run is long: handed back when A stops, it runs at once elsewhere.
      const first = ran.filter((r) => r.thread === 'long').length === 1;
      if (batch.lease.thread === 'long' && first) await new Promise<void>((resolve) => letGo.push(resolve));
      return done;
    };
    const passed = { byA: 0 };
    const a = await runner(
      { ...made, ...ofA },
      handler,
      1,
      { ...events, passedOn: () => passed.byA++ },
      ofA.logger,
    );
    await queue.intake.enqueue('kept', { id: 'k1', body: 'x' });
    await waitFor(async () => (await queue.admin.state('kept')).status === 'idle', {
      what: 'the first turn on A',
    });
    await queue.intake.enqueue('long', { id: 'l1', body: 'x' });
    await waitFor(() => letGo.length === 1, { what: 'A busy with a long turn' });
    const b = await runner(made, handler, 1, events);
    await queue.intake.enqueue('kept', { id: 'k2', body: 'x' });
    const keptTurns = () => ran.filter((r) => r.thread === 'kept').map((r) => r.owner);
    return { queue, a, b, letGo, keptTurns, passed, ran };
  }

  // The sweeper must not re-ring first: what a free worker runs here, the owner passed on.
  const passOnWithin = (affinityWaitMs: number) => ({ affinityWaitMs, lostDoorbellAfterMs: 120_000 });

  it('passes on a doorbell its busy owner held past the affinity wait, so a free worker runs it', async () => {
    const { queue, a, b, letGo, keptTurns, passed } = await busyOwner(passOnWithin(200));
    await waitFor(() => keptTurns().length === 2, { what: 'the kept thread on another worker' });
    expect(keptTurns()).toEqual([a.owner, b.owner]);
    expect(letGo).toHaveLength(1);
    expect(passed.byA).toBe(1);
    expect(await directList(queue, a.owner)).toEqual([]);
    letGo.shift()!();
  });

  it('keeps an overdue doorbell while every other worker is busy too, and passes it on once one has room', async () => {
    // The sweepers look for lost doorbells every 100 ms and call one lost after 300: a doorbell its
    // owner keeps on purpose must not count as lost.
    const made = await f.make({ affinityWaitMs: 100, lostDoorbellAfterMs: 300, sweepIntervalMs: 100 });
    const { queue } = made;
    const blocked = new Map<string, () => void>();
    const ran: { thread: string; owner: string }[] = [];
    const handler: TurnHandler = async (batch) => {
      const { thread, owner } = batch.lease;
      ran.push({ thread, owner });
      if (thread.startsWith('long')) await new Promise<void>((resolve) => blocked.set(thread, resolve));
      return done;
    };
    const passed = { byA: 0 };
    const revived = { doorbells: 0 };
    const events: RunnerEvents = { revived: (report) => (revived.doorbells += report.doorbellsRevived) };
    const a = await runner(made, handler, 1, { ...events, passedOn: () => passed.byA++ });
    await queue.intake.enqueue('kept', { id: 'k1', body: 'x' });
    await waitFor(async () => (await queue.admin.state('kept')).status === 'idle', { what: 'kept on A' });
    await queue.intake.enqueue('long-a', { id: 'la', body: 'x' });
    await waitFor(() => blocked.has('long-a'), { what: 'A busy' });
    const b = await runner(made, handler, 1, events);
    await queue.intake.enqueue('long-b', { id: 'lb', body: 'x' });
    await waitFor(() => blocked.has('long-b'), { what: 'B busy' });
    await queue.intake.enqueue('kept', { id: 'k2', body: 'x' });

    // Absence can only be shown over time: ten affinity waits, three lost-doorbell graces, and the
    // doorbell is still A's.
    const since = Date.now();
    await waitFor(() => Date.now() - since > 1_000, { what: 'ten affinity waits' });
    expect(passed.byA).toBe(0);
    expect(revived.doorbells).toBe(0);
    expect(await directList(queue, a.owner)).toHaveLength(1);

    blocked.get('long-b')!();
    await waitFor(() => ran.filter((r) => r.thread === 'kept').length === 2, { what: 'kept again' });
    expect(ran.filter((r) => r.thread === 'kept').map((r) => r.owner)).toEqual([a.owner, b.owner]);
    expect(passed.byA).toBe(1);
    blocked.get('long-a')!();
  });

  it('passes on what its own list holds when it stops', async () => {
    const { queue, a, b, keptTurns, passed } = await busyOwner(passOnWithin(60_000));
    await heldBy(queue, a.owner, 1);
    // No grace: the long turn is handed back, and the kept thread's doorbell goes to the shared queue.
    await a.close();
    await waitFor(() => keptTurns().length === 2, { what: 'the kept thread on the other worker' });
    expect(keptTurns()).toEqual([a.owner, b.owner]);
    expect(passed.byA).toBe(1);
    expect(await directList(queue, a.owner)).toEqual([]);
  });

  it('leaves a doorbell it could not pass on to the sweeper, with a warning', async () => {
    const warnings: string[] = [];
    const logger: LogSink = {
      debug: () => {},
      info: () => {},
      warn: (_fields, message) => warnings.push(message ?? ''),
      error: () => {},
    };
    const made = await f.make();
    // A's shared rings fail (the pass-on's among them); the queue's own rings still work.
    const failing: Doorbell = {
      ring: async () => {
        throw new Error('Redis is unavailable');
      },
      pending: (member, epoch) => made.doorbell.pending(member, epoch),
      taken: (doorbell, pool) => made.doorbell.taken(doorbell, pool),
    };
    let revived = 0;
    const { a, b, letGo, keptTurns, passed } = await busyOwner(
      { affinityWaitMs: 200, sweepIntervalMs: 100, lostDoorbellAfterMs: 1_000 },
      { doorbell: failing, logger },
      { revived: ({ doorbellsRevived }) => (revived += doorbellsRevived) },
    );
    await waitFor(() => keptTurns().length === 2, { what: 'the kept thread re-rung by a sweep' });
    expect(keptTurns()).toEqual([a.owner, b.owner]);
    expect(warnings).toContain('doorbell not passed on; the sweeper re-rings it');
    // Counted where it recovers: tributary_sweeper_revivals_total{reason="doorbell"}, not as passed on.
    expect(revived).toBe(1);
    expect(passed.byA).toBe(0);
    letGo.shift()!();
  });

  it('re-rings through the sweeper when the preferred worker froze with its doorbell', async () => {
    const made = await f.make({ affinityWaitMs: 100, sweepIntervalMs: 100, lostDoorbellAfterMs: 300 });
    const { queue } = made;
    await turnAs(queue, 'th', 'frozen-worker');
    // Frozen: its presence is still there when the doorbell is handed to it, and lapses soon after.
    // Until then its list counts as a line the thread waits in, not a lost doorbell.
    await announce(queue, 'frozen-worker', PRESENCE.taking, 500);
    const served: Batch[] = [];
    let revived = 0;
    const handler: TurnHandler = async (batch) => {
      served.push(batch);
      return done;
    };
    await runner(made, handler, 2, { revived: ({ doorbellsRevived }) => (revived += doorbellsRevived) });
    await queue.intake.enqueue('th', { id: 'm2', body: 'x' });
    await waitFor(() => served.length === 1, { what: 'the re-rung turn' });
    expect(served[0]!.messages.map((m) => m.id)).toEqual(['m2']);
    expect(revived).toBe(1);
    expect(await directList(queue, 'frozen-worker')).toHaveLength(1);
  });

  it('says it takes no direct doorbells while affinity is off, so a ringer that prefers it rings the shared queue', async () => {
    // No sweeper rescue within the test: the thread must not go to a list nobody reads.
    const made = await f.make({ affinity: false, lostDoorbellAfterMs: 120_000 });
    // A ringer with affinity on (mid-rollout) prefers the worker that ran the thread's last turn.
    const ringer = threadQueue(f.redis, { ...made.queue.config, affinity: true }, made.doorbell);
    await turnAs(ringer, 'th', 'w-off');
    const served: string[] = [];
    const r = new Runner({
      ...made,
      owner: 'w-off',
      connection: f.redis,
      replies: noReplies,
      handler: async (batch) => {
        served.push(batch.lease.thread);
        return done;
      },
    });
    await r.start();
    started.push(r);
    const presence = workerKeys(made.queue.config.prefix, r.owner).presence;
    await waitFor(async () => (await f.redis.get(presence)) === PRESENCE.retiring, { what: 'its presence' });
    await ringer.intake.enqueue('th', { id: 'm2', body: 'x' });
    await waitFor(() => served.includes('th'), { what: 'the turn, without the sweeper' });
    expect(await directList(made.queue, r.owner)).toEqual([]);
  });

  it('hands a shared doorbell back while direct turns hold every slot, so another worker runs it', async () => {
    const made = await f.make(LONG_WAIT);
    const { queue, doorbell } = made;
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const ran: { thread: string; owner: string }[] = [];
    const handler: TurnHandler = async (batch) => {
      ran.push({ thread: batch.lease.thread, owner: batch.lease.owner });
      if (batch.lease.thread === 'busy' && ran.length > 1) await held;
      return done;
    };
    // `other` ran last on a worker that is gone, so its next ring goes to the shared queue; the doorbell
    // of this warm-up turn, run by hand, is one more shared job, which A takes at its start and drops.
    await turnAs(queue, 'other', 'gone-worker');
    let takenByA = 0;
    const a = await runner(made, handler, 1, { doorbellTaken: () => takenByA++ });
    await queue.intake.enqueue('busy', { id: 'm1', body: 'x' });
    await waitFor(async () => (await queue.admin.state('busy')).status === 'idle', { what: 'first turn' });
    const presence = workerKeys(queue.config.prefix, a.owner).presence;
    await waitFor(async () => (await f.redis.get(presence)) === PRESENCE.taking, {
      what: 'A announcing itself',
    });
    await queue.intake.enqueue('busy', { id: 'm2', body: 'x' });
    await waitFor(() => ran.length === 2, { what: 'the direct turn holding the only slot' });
    expect(ran[1]!.owner).toBe(a.owner);

    // The only shared job from here on is `other`'s (`busy`'s doorbell waits in A's list).
    const takenBefore = takenByA;
    await queue.intake.enqueue('other', { id: 'o1', body: 'x' });
    const job = doorbellJobId(keysOf(queue, 'other').member, (await queue.admin.state('other')).epoch);
    await waitFor(() => takenByA > takenBefore, { what: 'runner A taking the shared doorbell' });
    // Taken with no free slot, it must go back to the queue rather than wait in A for the slot.
    await waitFor(
      async () => ['delayed', 'waiting'].includes(await (await doorbell.queueOf('other')).getJobState(job)),
      {
        what: 'runner A handing the doorbell back',
      },
    );
    expect((await queue.admin.state('other')).status).toBe('scheduled');

    const b = await runner(made, handler, 1);
    await waitFor(() => ran.some((r) => r.thread === 'other'), { what: 'the other thread’s turn' });
    expect(ran.find((r) => r.thread === 'other')!.owner).toBe(b.owner);
    release();
  });

  it('announces itself while taking doorbells, busy or not, then shutting down; withdraws once drained', async () => {
    const { queue, doorbell } = await f.make();
    // Each turn waits until the test lets it end.
    const turnsLetGo: (() => void)[] = [];
    const r = new Runner({
      queue,
      doorbell,
      connection: f.redis,
      replies: noReplies,
      concurrency: 1,
      handler: async () => {
        await new Promise<void>((resolve) => turnsLetGo.push(resolve));
        return done;
      },
    });
    const presence = workerKeys(queue.config.prefix, r.owner).presence;
    const announced = async (value: Presence) => (await f.redis.get(presence)) === value;
    await r.start();
    await waitFor(() => announced(PRESENCE.taking), { what: 'taking doorbells' });
    await queue.intake.enqueue('th', { id: 'm1', body: 'x' });
    await waitFor(() => turnsLetGo.length === 1, { what: 'the first turn' });
    // Its only slot is busy: ringers still hand it the thread's doorbells.
    expect(await announced(PRESENCE.taking)).toBe(true);
    turnsLetGo.shift()!();
    await waitFor(async () => (await queue.admin.state('th')).status === 'idle', {
      what: 'the first commit',
    });
    await queue.intake.enqueue('th', { id: 'm2', body: 'x' });
    await waitFor(() => turnsLetGo.length === 1, { what: 'the second turn' });
    // Closing with a turn running: still present (its thread stays its own), taking no doorbells.
    const closing = r.close(60_000);
    await waitFor(() => announced(PRESENCE.retiring), { what: 'shutting down' });
    turnsLetGo.shift()!();
    await closing;
    expect(await f.redis.exists(presence)).toBe(0);
    expect((await queue.admin.history('th')).length).toBe(2);
  });
});
