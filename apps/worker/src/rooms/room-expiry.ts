import type { Logger } from 'pino';
import type { ThreadRooms } from './thread-rooms.js';

/** A parked room older than this was left by a sweep that died part-way: any sweep finishes it. */
const ABANDONED_MS = 10 * 60_000;
/** The longest time between sweeps: an expired room outlives its thread's keys by at most about this. */
const MAX_SWEEP_INTERVAL_MS = 60_000;

export interface RoomSweepOptions {
  rooms: ThreadRooms;
  /** Closes this worker's live sessions of expired threads (SessionContinuity.releaseExpired). */
  releaseSessions: (expired: (thread: string) => Promise<boolean>) => Promise<number>;
  /** Whether the thread's keys have expired (ThreadTurns.expired): true only while no turn holds it. */
  expired: (thread: string) => Promise<boolean>;
  /** THREAD_IDLE_TTL_MS: a room used more recently than this belongs to a live thread. */
  idleTtlMs: number;
  logger: Logger;
  /** After each sweep: what the rooms kept took after their last turns, and how many were deleted. */
  swept: (result: SweepResult) => void;
}

export interface SweepResult {
  bytes: number;
  deleted: number;
}

/** Every tenth of the idle TTL, at most a minute apart. */
function sweepIntervalMs(idleTtlMs: number): number {
  return Math.min(idleTtlMs / 10, MAX_SWEEP_INTERVAL_MS);
}

/**
 * One pass over the workspace root (docs/adr/0046): closes this worker's sessions of expired threads,
 * deletes the room of each thread whose keys have expired, and adds up what the others took at the end
 * of their last turns. A room's record is rewritten at the end of each of its turns, so only a room
 * unused for the idle TTL costs a Redis read. Rooms go two sweeps after their thread could have
 * expired, so every worker has closed its live session of the thread (bound to the room) by then.
 */
async function sweepRooms(options: RoomSweepOptions): Promise<SweepResult> {
  const { rooms, expired, idleTtlMs } = options;
  await options.releaseSessions(expired);
  let deleted = await rooms.finishParked(expired, ABANDONED_MS);
  let bytes = 0;
  const unusedMs = idleTtlMs + 2 * sweepIntervalMs(idleTtlMs);
  for await (const room of rooms.recordedRooms()) {
    const idle = Date.now() - room.usedAt >= unusedMs;
    if (idle && (await expired(room.thread)) && (await rooms.expire(room, expired))) deleted++;
    else bytes += room.bytes;
  }
  return { bytes, deleted };
}

/**
 * Sweeps now and then, one sweep at a time. Every worker sweeps: each closes its own sessions, the
 * root is shared, and a room two sweeps race for is deleted by whichever parks it first.
 */
export function startRoomSweep(options: RoomSweepOptions): () => void {
  const everyMs = sweepIntervalMs(options.idleTtlMs);
  let sweeping = false;
  let stopped = false;
  const timer = setInterval(() => {
    if (sweeping) return;
    sweeping = true;
    sweepRooms(options)
      .then(options.swept, (error: unknown) => {
        if (!stopped) options.logger.warn({ err: error }, 'workspace sweep failed; trying again');
      })
      .finally(() => {
        sweeping = false;
      });
  }, everyMs);
  timer.unref();
  return () => {
    stopped = true;
    clearInterval(timer);
  };
}
