import { ConditionLog, type LogSink } from '@tributary/observability';
import { checkTopology } from './cluster-health.js';
import type { RedisClient } from './connections.js';
import { type ConnectionProfile, onConnectionError, openConnection, whenReady } from './connections.js';
import { type FleetStats, readFleetStats } from './fleet-stats.js';
import { PostedParts } from './posted-parts.js';
import { deadBounds, type QueueConfig, queueConfig, storeDefaults } from './queue-config.js';
import { checkRedisSafety, type RedisSafetyReport } from './redis-safety.js';
import { Runner, type RunnerOptions } from './runner.js';
import { Approvals } from './stores/approvals.js';
import { AuditLog } from './stores/audit-log.js';
import { BatchHistory } from './stores/batch-history.js';
import { FleetListing } from './stores/fleet-listing.js';
import { FleetPace } from './stores/fleet-pace.js';
import { GateState } from './stores/gate-state.js';
import { type KeysOf, recentKeysOf } from './stores/keys-of.js';
import { MessageReceipts } from './stores/message-receipts.js';
import { RecentThreads } from './stores/recent-threads.js';
import { ReplyOutbox } from './stores/reply-outbox.js';
import { RouteUsage } from './stores/route-usage.js';
import { SessionRecords } from './stores/session-records.js';
import { ThreadControls } from './stores/thread-controls.js';
import { ThreadParentStore } from './stores/thread-parents.js';
import { ThreadRoutes } from './stores/thread-routes.js';
import { TurnLimits } from './stores/turn-limits.js';
import { WorkerRegistry } from './stores/worker-registry.js';
import type { ThreadAdmin } from './threads/thread-admin.js';
import { type ThreadQueue, threadQueue } from './threads/thread-queue.js';
import { BullDoorbell } from './wake/doorbell.js';
import { RouteLines } from './wake/route-lines.js';

export interface StoreOptions {
  url: string;
  connection: ConnectionProfile;
  queue?: Partial<QueueConfig>;
  /** Entries the operators' audit log keeps (about: it is trimmed a stream node at a time). */
  auditMaxEntries?: number;
}

/**
 * Tributary's state in Redis, with one owner: every client is built here, and apps reach the data
 * through these narrow, named interfaces, never through a raw client. The key layout is thread-keys.ts,
 * the state machine is the scripts (lua/queue-calls.ts).
 */
export class Store {
  /** The thread state machine, by caller: intake, turns, sweep, admin. */
  readonly queue: ThreadQueue;
  readonly doorbell: BullDoorbell;
  /** Read by ingress's gates; written by the enqueue script. */
  readonly gates: GateState;
  /** Each thread's records of ended batches. */
  readonly history: BatchHistory;
  /** Which agent session each thread is on (session continuity). */
  readonly sessions: SessionRecords;
  /** Each thread's committed replies and notices, waiting for delivery; dead replies. */
  readonly replies: ReplyOutbox;
  /** What this process posted of each reply, kept while Redis cannot record it (its runner's, its streams'). */
  readonly postedParts: PostedParts;
  /** `/cancel`, `/cancel-all`, `/reset`, and the workers' subscription to cancels. */
  readonly controls: ThreadControls;
  /** The operator's view and levers of one thread: the queue's own admin part. */
  readonly admin: ThreadAdmin;
  /** The operators' lists: threads by state, dead letters and replies, the overview, a message by id. */
  readonly listing: FleetListing;
  /** The workers as they report themselves; operators' drain requests. */
  readonly workers: WorkerRegistry;
  /** The operators' actions, and their idempotency keys. */
  readonly audit: AuditLog;
  /** Each person's latest thread per channel, for the commands that name none. */
  readonly recent: RecentThreads;
  /** Permission requests put to the people of a thread, and each thread's starter. */
  readonly approvals: Approvals;
  /** The route each thread started with (docs/adr/0058). */
  readonly routes: ThreadRoutes;
  /** Tokens spent per route and day, and the routes' daily budgets (docs/adr/0059). */
  readonly usage: RouteUsage;
  /** Each route's limit on concurrent turns across the fleet, its slots and its line (docs/adr/0062). */
  readonly turnLimits: TurnLimits;
  /** Each route's line in front of its pool's doorbell queue, and the routes' weights (docs/adr/0063). */
  readonly routeLines: RouteLines;

  private readonly keysOf: KeysOf;

  private constructor(
    private readonly redis: RedisClient,
    readonly config: Readonly<QueueConfig>,
    auditMaxEntries: number,
  ) {
    const keysOf = recentKeysOf(config.prefix, config.buckets);
    this.keysOf = keysOf;
    this.routes = new ThreadRoutes(redis, config.prefix, config.idleTtlMs);
    this.doorbell = new BullDoorbell(redis, config, (thread) => this.routes.placeOf(thread));
    this.gates = new GateState(redis, keysOf);
    this.sessions = new SessionRecords(redis, keysOf);
    this.replies = new ReplyOutbox(redis, keysOf, deadBounds(config));
    this.history = new BatchHistory(redis, keysOf, config.historyLimit);
    const receipts = new MessageReceipts(redis, keysOf, this.history);
    const { sessions, replies, history } = this;
    this.queue = threadQueue(redis, config, this.doorbell, { sessions, replies, history, receipts });
    this.admin = this.queue.admin;
    this.postedParts = new PostedParts(this.replies);
    this.controls = new ThreadControls(redis, keysOf, config);
    this.listing = new FleetListing(redis, keysOf, config, receipts);
    this.workers = new WorkerRegistry(redis, config.prefix);
    this.audit = new AuditLog(redis, config.prefix, auditMaxEntries);
    this.recent = new RecentThreads(redis, config.prefix, config.idleTtlMs);
    this.approvals = new Approvals(redis, config.prefix, config.idleTtlMs);
    this.usage = new RouteUsage(redis, config.prefix);
    this.turnLimits = new TurnLimits(redis, config.prefix);
    this.routeLines = new RouteLines(redis, config.prefix);
  }

  /**
   * Rings at once a thread whose batch waits out a put-back delay (its route's slot was freed).
   * `woken`: it rings now; `not-yet`: its put-back is still under way (it is running, or its doorbell
   * is not there yet), ask again shortly; `gone`: it has nothing waiting.
   */
  async wake(thread: string): Promise<'woken' | 'not-yet' | 'gone'> {
    const state = await this.admin.state(thread);
    if (state.status === 'running') return 'not-yet';
    if (state.status !== 'scheduled') return 'gone';
    const rung = await this.doorbell.promote(this.keysOf(thread).member, state.epoch);
    return rung === 'rung' ? 'woken' : 'not-yet';
  }

  /**
   * A turn slot of the thread's route was freed and no thread put back waits for it: the route's line
   * lets its next doorbell in (docs/adr/0064).
   */
  moveLine(thread: string): Promise<void> {
    return this.doorbell.moveLine(thread);
  }

  /** Connects in the background: a Redis that is down makes calls fail (or wait), not the start. */
  static open(options: StoreOptions): Store {
    return new Store(
      openConnection(options.url, options.connection),
      queueConfig(options.queue),
      options.auditMaxEntries ?? storeDefaults.auditMaxEntries,
    );
  }

  /** Posts and edits paced across the fleet; `onWait` hears each write's wait for its slot. */
  pace(onWait?: (platform: string, waitMs: number) => void): FleetPace {
    return new FleetPace(this.redis, this.config.prefix, onWait);
  }

  /** Each thread's parent message, as the platform adapters describe it. */
  parents<Parent extends object>(): ThreadParentStore<Parent> {
    return new ThreadParentStore<Parent>(this.redis, this.keysOf, this.config.idleTtlMs);
  }

  /**
   * Connection problems of every connection of this store, blocking ones included (each reconnects on
   * its own); never thrown as unhandled `error` events, listened to or not.
   */
  onConnectionError(listener: (error: Error) => void): void {
    onConnectionError(this.redis, listener);
  }

  /** Logs connection problems once per condition, and their end when the connection is ready again. */
  logConnectionErrors(logger: LogSink): void {
    const errors = new ConditionLog(logger, 'Redis connection error');
    this.onConnectionError((error) => errors.report(error));
    this.onConnectionReady(() => errors.cleared());
  }

  /** The connection is (again) ready: after start-up, after each reconnect. */
  onConnectionReady(listener: () => void): void {
    this.redis.on('ready', listener);
  }

  /** Resolves when connected, or after `timeoutMs` whatever the state. */
  whenReady(timeoutMs: number): Promise<void> {
    return whenReady(this.redis, timeoutMs);
  }

  /**
   * Readiness: Redis answers, can serve every key (a Cluster has a primary for every slot) and holds
   * every script (reloaded after a Redis restart or a failover).
   */
  async ready(): Promise<void> {
    await checkTopology(this.redis);
    await this.queue.ensureScripts();
  }

  /** Refuses (or warns about) a Redis that may evict acknowledged messages. */
  checkSafety(mode: 'refuse' | 'warn', logger: LogSink): Promise<RedisSafetyReport> {
    return checkRedisSafety(this.redis, mode, logger);
  }

  fleetStats(): Promise<FleetStats> {
    return readFleetStats(this.redis, this.config, this.doorbell, this);
  }

  /** A worker's runner (its turns and its replies) on this store. */
  runner(options: Omit<RunnerOptions, 'queue' | 'doorbell' | 'connection' | 'parts'>): Runner {
    const { queue, doorbell, redis: connection, postedParts: parts } = this;
    return new Runner({ ...options, queue, doorbell, connection, parts });
  }

  async close(): Promise<void> {
    await this.doorbell.close();
    this.redis.disconnect();
  }

  /** Drops the connection at once, without waiting for Redis: calls in flight and queued fail. */
  disconnect(): void {
    this.redis.disconnect();
  }
}
