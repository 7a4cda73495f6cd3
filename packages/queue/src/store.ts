import { ConditionLog, type LogSink } from '@tributary/observability';
import { checkTopology } from './cluster-health.js';
import type { RedisClient } from './connections.js';
import { type ConnectionProfile, onConnectionError, openConnection, whenReady } from './connections.js';
import { BullDoorbell } from './doorbells.js';
import { type FleetStats, readFleetStats } from './fleet-stats.js';
import { PostedParts } from './posted-parts.js';
import { deadBounds, type QueueConfig, queueConfig, storeDefaults } from './queue-config.js';
import { checkRedisSafety, type RedisSafetyReport } from './redis-safety.js';
import { Runner, type RunnerOptions } from './runner.js';
import { AuditLog } from './stores/audit-log.js';
import { FleetListing } from './stores/fleet-listing.js';
import { GateState } from './stores/gate-state.js';
import { MessageReceipts } from './stores/message-receipts.js';
import { ReplyOutbox } from './stores/reply-outbox.js';
import { SessionRecords } from './stores/session-records.js';
import { ThreadAdmin } from './stores/thread-admin.js';
import { ThreadControls } from './stores/thread-controls.js';
import { ThreadParentStore } from './stores/thread-parents.js';
import { WorkerRegistry } from './stores/worker-registry.js';
import { ThreadQueue } from './thread-queue.js';

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
  readonly queue: ThreadQueue;
  readonly doorbell: BullDoorbell;
  /** Read by ingress's gates; written by the enqueue script. */
  readonly gates: GateState;
  /** Which agent session each thread is on (session continuity). */
  readonly sessions: SessionRecords;
  /** Each thread's committed replies and notices, waiting for delivery; dead replies. */
  readonly replies: ReplyOutbox;
  /** What this process posted of each reply, kept while Redis cannot record it (its runner's, its streams'). */
  readonly postedParts: PostedParts;
  /** `/cancel`, `/cancel-all`, `/reset`, and the workers' subscription to cancels. */
  readonly controls: ThreadControls;
  readonly admin: ThreadAdmin;
  /** The operators' lists: threads by state, dead letters and replies, the overview, a message by id. */
  readonly listing: FleetListing;
  /** The workers as they report themselves; operators' drain requests. */
  readonly workers: WorkerRegistry;
  /** The operators' actions, and their idempotency keys. */
  readonly audit: AuditLog;

  private constructor(
    private readonly redis: RedisClient,
    config: Readonly<QueueConfig>,
    auditMaxEntries: number,
  ) {
    this.doorbell = new BullDoorbell(redis, config);
    this.queue = new ThreadQueue(redis, config, this.doorbell);
    const keysOf = (thread: string) => this.queue.keys(thread);
    this.gates = new GateState(redis, keysOf);
    this.sessions = new SessionRecords(redis, keysOf);
    this.replies = new ReplyOutbox(redis, keysOf, deadBounds(config));
    this.postedParts = new PostedParts(this.replies);
    this.controls = new ThreadControls(redis, this.queue);
    const receipts = new MessageReceipts(redis, keysOf, this.queue);
    this.admin = new ThreadAdmin(this.queue, this.sessions, this.replies, receipts);
    this.listing = new FleetListing(redis, keysOf, config, receipts);
    this.workers = new WorkerRegistry(redis, config.prefix);
    this.audit = new AuditLog(redis, config.prefix, auditMaxEntries);
  }

  /** Connects in the background: a Redis that is down makes calls fail (or wait), not the start. */
  static open(options: StoreOptions): Store {
    return new Store(
      openConnection(options.url, options.connection),
      queueConfig(options.queue),
      options.auditMaxEntries ?? storeDefaults.auditMaxEntries,
    );
  }

  get config(): Readonly<QueueConfig> {
    return this.queue.config;
  }

  /** Each thread's parent message, as the platform adapters describe it. */
  parents<Parent extends object>(): ThreadParentStore<Parent> {
    return new ThreadParentStore<Parent>(
      this.redis,
      (thread) => this.queue.keys(thread),
      this.config.idleTtlMs,
    );
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
    return readFleetStats(this.redis, this.config, this.doorbell);
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
