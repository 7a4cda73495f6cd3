import { ConditionLog, type LogSink, silentLogger } from '@tributary/observability';
import { decodeThread } from './thread-keys.js';
import type { ThreadSweep } from './threads/thread-sweep.js';
import type { Doorbell } from './wake/doorbell.js';

export interface SweepReport {
  leasesRevived: number;
  doorbellsRevived: number;
  /** Threads taken from workers that are gone (presence expired), their leases still running. */
  takenOver: number;
  /**
   * Threads whose lease expired but whose owner's agent processes survived its warden's kill: left
   * alone, since another run of the thread must not meet them (WorkerKeys.survivors).
   */
  heldBack: number;
}

/** What a pass reports for metrics, beyond its log line. */
export interface SweeperEvents {
  revived?(report: SweepReport): void;
}

/** Hands over threads with a reply due for delivery (a retry's time came, or their deliverer is gone). */
export type OfferReplies = (threads: string[]) => void;

/** Of each sweep candidate list, per bucket and pass. */
const SWEEP_BATCH = 200;
/** Of the threads with a reply due, per bucket and pass (a worker delivers a few threads at once). */
const DUE_BATCH = 20;

/**
 * Revives threads whose owner is gone (its presence expired) or whose owner's lease expired, and
 * threads whose doorbell was lost; offers the threads whose reply is due to the reply loop. Every worker runs one; a
 * short per-bucket lock keeps the revivals to one sweeper per bucket at a time.
 */
export class Sweeper {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> = Promise.resolve();
  private readonly errors: ConditionLog;
  /** Owners whose surviving agents were reported, so the error is said once while they last. */
  private readonly reportedSurvivors = new Set<string>();

  constructor(
    private readonly sweep: ThreadSweep,
    private readonly doorbell: Doorbell,
    private readonly owner: string,
    private readonly offerReplies: OfferReplies,
    private readonly logger: LogSink = silentLogger,
    private readonly events: SweeperEvents = {},
  ) {
    this.errors = new ConditionLog(logger, 'sweep failed; retrying next interval');
  }

  start(): void {
    const tick = () => {
      this.running = this.sweepOnce()
        .then((report) => {
          this.errors.cleared();
          if (report.leasesRevived + report.doorbellsRevived + report.takenOver + report.heldBack > 0) {
            this.logger.info({ ...report }, 'sweeper revived threads');
            this.events.revived?.(report);
          }
        })
        .catch((error: unknown) => this.errors.report(error))
        .finally(() => {
          if (this.timer) this.timer = setTimeout(tick, this.sweep.config.sweepIntervalMs);
        });
    };
    this.timer = setTimeout(tick, 0);
  }

  async stop(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
  }

  async sweepOnce(): Promise<SweepReport> {
    const report: SweepReport = { leasesRevived: 0, doorbellsRevived: 0, takenOver: 0, heldBack: 0 };
    // Whether each owner seen in this sweep is present; asked once per owner, not once per thread.
    const present = new Map<string, Promise<boolean>>();
    // What each owner seen in this sweep left running that its warden could not kill, if anything.
    const survivors = new Map<string, Promise<string | null>>();
    // The doorbells each owner's own list holds, read once per owner and sweep.
    const held = new Map<string, Promise<Set<string>>>();
    // Buckets are swept concurrently: one wait for their round trips, not one per bucket. A bucket's
    // keys share a hash tag, so its scan is one script even in a Cluster; the buckets' scans are not.
    await Promise.all(
      Array.from({ length: this.sweep.config.buckets }, (_, bucket) =>
        this.sweepBucket(bucket, report, present, held, survivors),
      ),
    );
    return report;
  }

  private async sweepBucket(
    bucket: number,
    report: SweepReport,
    present: Map<string, Promise<boolean>>,
    held: Map<string, Promise<Set<string>>>,
    survivors: Map<string, Promise<string | null>>,
  ): Promise<void> {
    const scan = await this.sweep.scanBucket(bucket, this.owner, {
      sweepBatch: SWEEP_BATCH,
      dueBatch: DUE_BATCH,
    });
    if (!scan) return;
    if (scan.repliesDue.length > 0) this.offerReplies(scan.repliesDue.map(decodeThread));

    for (const member of scan.expired) {
      if (await this.heldBySurvivors(member, survivors)) report.heldBack++;
      else if (await this.sweep.revive(member, 'lease')) report.leasesRevived++;
    }
    // Awaited first: `+= await` would add to the count read before other buckets added theirs.
    const takenOver = await this.takeOverFromGone(scan.leased, present);
    report.takenOver += takenOver;
    for (const member of scan.waiting) {
      if (await this.reviveDoorbell(member, scan.now, present, held)) report.doorbellsRevived++;
    }
  }

  /** Re-rings the threads among `members` whose owner's presence has expired. */
  private async takeOverFromGone(members: string[], present: Map<string, Promise<boolean>>): Promise<number> {
    if (members.length === 0) return 0;
    const holders = await this.sweep.holders(members);
    let taken = 0;
    for (const [i, holder] of holders.entries()) {
      if (!holder || (await this.isPresent(holder.owner, present))) continue;
      if (await this.sweep.takeOver(members[i]!, holder.owner, holder.fence)) taken++;
    }
    return taken;
  }

  /**
   * Whether the thread's owner left agent processes its warden could not kill (the warden keeps it
   * present meanwhile, so only an expired lease brings such a thread here). Said at error level once
   * per owner: the thread waits until someone ends them, and the alert on the count says so.
   */
  private async heldBySurvivors(
    member: string,
    survivors: Map<string, Promise<string | null>>,
  ): Promise<boolean> {
    const [holder] = await this.sweep.holders([member]);
    if (!holder) return false;
    const { owner } = holder;
    let left = survivors.get(owner);
    if (!left) {
      left = this.sweep.survivorsOf(owner);
      survivors.set(owner, left);
    }
    const pids = await left;
    if (pids === null) {
      this.reportedSurvivors.delete(owner);
      return false;
    }
    if (!this.reportedSurvivors.has(owner)) {
      this.reportedSurvivors.add(owner);
      this.logger.error(
        { owner, survivors: pids, thread: decodeThread(member) },
        'a dead worker left agent processes its warden could not kill; its threads are not taken over until they are gone',
      );
    }
    return true;
  }

  private isPresent(owner: string, present: Map<string, Promise<boolean>>): Promise<boolean> {
    let answer = present.get(owner);
    if (!answer) {
      answer = this.sweep.isPresent(owner);
      present.set(owner, answer);
    }
    return answer;
  }

  private async reviveDoorbell(
    member: string,
    now: number,
    present: Map<string, Promise<boolean>>,
    held: Map<string, Promise<Set<string>>>,
  ): Promise<boolean> {
    const thread = decodeThread(member);
    const { epoch, owner } = await this.sweep.scheduled(thread);
    // Still in line: behind other threads in the shared queue, or kept by its busy owner, which
    // passes it on only when another worker has room (docs/adr/0007). Look again a grace period on.
    const waiting =
      (await this.doorbell.pending(member, epoch)) ||
      (typeof owner === 'string' &&
        (await this.isPresent(owner, present)) &&
        (await this.heldBy(owner, held)).has(`${thread}\n${epoch}`));
    if (waiting) {
      await this.sweep.lookAgainLater(member, now);
      return false;
    }
    return this.sweep.revive(member, 'doorbell', epoch);
  }

  /** The doorbells (thread and epoch) in `owner`'s own list, read once per owner and sweep. */
  private heldBy(owner: string, held: Map<string, Promise<Set<string>>>): Promise<Set<string>> {
    let doorbells = held.get(owner);
    if (!doorbells) {
      doorbells = this.sweep.doorbellsOf(owner);
      held.set(owner, doorbells);
    }
    return doorbells;
  }
}
