import type { RedisClient } from '../connections.js';
import { QUEUE_SCRIPTS } from '../lua/queue-calls.js';
import { Scripts } from '../lua/scripts.js';
import type { QueueConfig } from '../queue-config.js';
import { ReplicaAcknowledgement } from '../replication.js';
import { type KeysOf, recentKeysOf } from '../stores/keys-of.js';
import type { ThreadKeys } from '../thread-keys.js';
import type { Doorbell, RingOptions } from '../wake/doorbell.js';

/**
 * What every caller of the thread state machine shares (intake, turns, sweep, admin): the scripts
 * (lua/queue-calls.ts names each one's keys and arguments), each thread's keys, the doorbell a script's
 * `ring` answer is passed to, and the replica confirmation an acknowledged write waits for.
 */
export class ThreadScripts {
  readonly scripts: Scripts;
  readonly keys: KeysOf;
  private readonly replicas: ReplicaAcknowledgement;

  constructor(
    readonly redis: RedisClient,
    readonly config: Readonly<QueueConfig>,
    private readonly doorbell: Doorbell,
  ) {
    this.scripts = new Scripts(redis, QUEUE_SCRIPTS);
    this.replicas = new ReplicaAcknowledgement(redis, config.ackReplicas, config.ackReplicasTimeoutMs);
    this.keys = recentKeysOf(config.prefix, config.buckets);
  }

  /** Readiness: every script is in Redis's cache (reloaded after a Redis restart). */
  ensureLoaded(): Promise<number> {
    return this.scripts.ensureLoaded();
  }

  /** Rings the thread's doorbell for the epoch a script answered with. */
  async ring(k: ThreadKeys, epoch: number, options: RingOptions = {}): Promise<void> {
    await this.doorbell.ring(k.thread, k.member, epoch, options);
  }

  /** Waits until the replicas `ackReplicas` asks for hold the thread's writes (or throws). */
  replicated(k: ThreadKeys): Promise<void> {
    return this.replicas.confirm(k.state);
  }
}
