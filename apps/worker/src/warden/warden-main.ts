/**
 * The agent warden: a small process each worker starts beside itself (docs/adr/0037). It holds the
 * worker's presence in Redis and the list of its agents' process groups, and kills the agents when
 * the worker dies (its stdin closes without `bye`), stops answering (no pulse within the stall
 * tolerance) or can no longer be announced (Redis did not confirm the presence in time), before
 * another worker can take the worker's threads over. A revocation is final: the warden announces the
 * worker no more and kills any agent it starts afterwards; the worker stops and is restarted.
 * Configured by TRIBUTARY_WARDEN (JSON).
 */
import { createWriteStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { HostLease } from '@tributary/acp/host-lease';
import { PRESENCE, PresenceWriter } from '@tributary/queue/presence';
import { killAgents } from './process-groups.js';
import { presenceDue, trustAfterWrite, wardenVerdict } from './warden-policy.js';
import { encodeReport, parseCommand, type WardenReport } from './warden-protocol.js';
import { parseWardenSettings } from './warden-settings.js';

const TICK_MS = 100;
const DELETE_ATTEMPTS = 5;
const DELETE_RETRY_MS = 200;
/** After a failed write, the next one waits this long, so an outage is not met with a write a tick. */
const WRITE_RETRY_MS = 500;
const settings = parseWardenSettings(process.env.TRIBUTARY_WARDEN);
const { presenceTtlMs, stallToleranceMs } = settings;
const reports = createWriteStream('', { fd: 3 });
let workerGone = false;

function report(message: WardenReport): void {
  if (!workerGone) {
    reports.write(encodeReport(message));
    return;
  }
  // Nobody reads fd 3 any more: what must be said goes where the worker's own lines went.
  if (message.kind === 'log') {
    process.stderr.write(
      `${JSON.stringify({ level: message.level, msg: message.msg, ...message.fields, component: 'warden' })}\n`,
    );
  }
}
const log = (level: 'info' | 'warn' | 'error', msg: string, fields: Record<string, unknown> = {}) =>
  report({ kind: 'log', level, msg, fields });
reports.on('error', () => {
  workerGone = true;
});

let redisError: string | undefined;
/** Said once per kind of error: a Redis outage must not flood the log at every reconnect or write. */
function redisFailed(error: Error): void {
  if (error.message === redisError) return;
  redisError = error.message;
  log('warn', 'warden cannot announce the worker in Redis', { err: error.message });
}
const announcement = new PresenceWriter(settings.redisUrl, settings.prefix, settings.owner, redisFailed);
/** Where the agents run in a container of their own: the host runs them only while this lease pulses. */
const hostLease =
  settings.agentHostSocket === undefined
    ? undefined
    : new HostLease(
        settings.agentHostSocket,
        stallToleranceMs,
        (level, msg, fields) => log(level, msg, fields),
        (ticket) => report({ kind: 'hostTicket', ticket }),
      );

const groups = new Set<number>();
let presence = settings.presence;
let state: 'announcing' | 'withdrawn' | 'revoked' = 'announcing';
/** The presence key's writes and its delete, one after another: a late delete must not undo a write. */
let writes: Promise<unknown> = Promise.resolve();
const clock = {
  lastPulseAt: performance.now(),
  // No agent runs before Redis first confirms the presence (the worker waits for it), so nothing is
  // at stake until then.
  trustedUntil: Number.POSITIVE_INFINITY,
  lastWriteAt: Number.NEGATIVE_INFINITY,
};
let announced = false;

function writePresence(): Promise<unknown> {
  const sentAt = performance.now();
  clock.lastWriteAt = sentAt;
  const value = presence;
  writes = writes.then(async () => {
    if (state !== 'announcing') return;
    try {
      await announcement.write(value, presenceTtlMs);
    } catch (error) {
      redisFailed(error as Error);
      // Tried again soon rather than a quarter of the TTL later.
      clock.lastWriteAt = sentAt - presenceTtlMs / 4 + WRITE_RETRY_MS;
      return;
    }
    clock.trustedUntil = trustAfterWrite(sentAt, presenceTtlMs);
    redisError = undefined;
    report({ kind: 'announced', presence: value });
    if (!announced) {
      announced = true;
      // No agent may start before the agent host runs them under this warden's lease. Waited for
      // outside the chain: the presence goes on being written while the host is awaited.
      void (hostLease?.ready ?? Promise.resolve()).then(() => report({ kind: 'present' }));
    }
  });
  return writes;
}

/**
 * Deletes the presence so other workers take the threads now rather than at its expiry; a few tries,
 * since the connection may be between reconnects (a failed delete only delays the takeover).
 */
function deletePresence(): Promise<unknown> {
  writes = writes.then(async () => {
    for (let attempt = 1; ; attempt++) {
      try {
        await announcement.withdraw();
        return;
      } catch (error) {
        if (attempt === DELETE_ATTEMPTS) {
          log('warn', 'presence not deleted; it expires on its own', { err: (error as Error).message });
          return;
        }
        await sleep(DELETE_RETRY_MS);
      }
    }
  });
  return writes;
}

/** Agent processes still running after a kill: here (pids of this host), and in the agent host (its pids). */
interface Survivors {
  here: number[];
  host: number[];
}

/**
 * SIGKILLs the worker's agents: those it started here (led by `leaders`, below `roots`) and, where
 * they run in an agent host, every agent of the host, which answers once they are gone.
 */
async function killEverywhere(leaders: readonly number[], roots: readonly number[]): Promise<Survivors> {
  const [here, host] = await Promise.all([killAgents(leaders, roots), hostLease?.revoke() ?? []]);
  return { here, host };
}

/**
 * Kills the agents and, only once none of them runs, deletes the presence: the sweepers take the
 * threads over as soon as it is gone. A process the kill could not end (another user's, another PID
 * namespace's) holds the takeover back for as long as it runs (holdWhileSurviving): another run of
 * its thread must never meet it.
 */
async function killThenWithdraw(why: string, cause: string): Promise<void> {
  const killed = [...groups];
  const left = await presentWhile(killEverywhere(killed, []));
  const survivors = [...left.here, ...left.host];
  if (survivors.length > 0) {
    log(
      'error',
      `${why}: agent processes survived SIGKILL; other workers will not take this worker's threads until they are gone (end them by hand: kill -9 ${survivors.join(' ')})`,
      { killed, survivors },
    );
    await holdWhileSurviving(left);
    log('warn', `${why}: the surviving agent processes are gone; other workers take its threads now`, {
      survivors,
    });
  } else log('error', `${why}: ${cause}`, { killed });
  await deletePresence();
}

/**
 * Keeps the presence from lapsing while `work` (a kill and the wait for its processes to be gone)
 * runs: no other worker may take a thread over before its agents are known to be dead. Taking no
 * direct doorbells: the worker is dead or revoked.
 */
async function presentWhile<T>(work: Promise<T>): Promise<T> {
  const refresh = () => {
    writes = writes.then(() => announcement.write(PRESENCE.retiring, presenceTtlMs).catch(redisFailed));
  };
  refresh();
  const timer = setInterval(refresh, presenceTtlMs / 4);
  try {
    return await work;
  } finally {
    clearInterval(timer);
  }
}

/**
 * Keeps the worker present, and says which processes survived, until none of them runs: the kill is
 * sent again every round while both keys are refreshed well within their TTL. A failed write is
 * retried at the next refresh; should the warden itself die, the keys expire and the takeover goes
 * ahead, as it must for a worker nothing acts for any more.
 */
async function holdWhileSurviving(survivors: Survivors): Promise<void> {
  let left = survivors;
  const hold = () => {
    writes = writes.then(() =>
      announcement.holdFor([...left.here, ...left.host], presenceTtlMs).catch(redisFailed),
    );
  };
  hold();
  const timer = setInterval(hold, presenceTtlMs / 4);
  try {
    while (left.here.length + left.host.length > 0) left = await killEverywhere([], left.here);
  } finally {
    clearInterval(timer);
  }
}

async function revoke(why: string): Promise<void> {
  state = 'revoked';
  // Told first, so the worker hands its turns back rather than counting the kills as failures.
  report({ kind: 'revoked', why });
  await killThenWithdraw(
    why,
    'killed its agents and withdrew its presence, so other workers can take its threads',
  );
}

const ticker = setInterval(() => {
  if (state !== 'announcing') return;
  const now = performance.now();
  const verdict = wardenVerdict(now, clock, stallToleranceMs);
  if (verdict.kind === 'revoke') {
    void revoke(verdict.why);
    return;
  }
  if (presenceDue(now, clock, stallToleranceMs, presenceTtlMs)) void writePresence();
  // Pulsed on only while the worker pulses: the host ends the agents of a worker that stopped.
  if (now - clock.lastPulseAt <= stallToleranceMs) hostLease?.pulse();
}, TICK_MS);

let goodbye = false;
const commands = createInterface({ input: process.stdin });
commands.on('line', (line) => {
  const command = parseCommand(line);
  switch (command?.kind) {
    case 'watch':
      groups.add(command.pgid);
      // A revoked worker may still start one before it hears: it must not run.
      if (state === 'revoked') void killAgents([command.pgid]);
      return;
    case 'forget':
      groups.delete(command.pgid);
      return;
    case 'pulse': {
      clock.lastPulseAt = performance.now();
      const changed = command.presence !== presence;
      presence = command.presence;
      // A worker retiring ('0') must stop getting direct doorbells now, not at the next refresh.
      if (changed && state === 'announcing') void writePresence();
      return;
    }
    case 'withdraw':
      if (state === 'announcing') state = 'withdrawn';
      void deletePresence().then(() => report({ kind: 'withdrawn' }));
      return;
    case 'bye':
      goodbye = true;
      return;
    default:
      log('warn', 'warden ignored a line it does not understand', { line: line.slice(0, 80) });
  }
});
commands.on('close', () => {
  clearInterval(ticker);
  workerGone = !goodbye;
  void (async () => {
    if (!goodbye) {
      await killThenWithdraw(
        'the worker died',
        'killed its agents and withdrew its presence, so other workers take its threads now',
      );
    } else if (groups.size > 0 || state === 'announcing') {
      // A stop cut short: agents left running, or the presence never withdrawn.
      const killed = [...groups];
      const survivors = await killAgents(killed);
      if (killed.length > 0)
        log('warn', 'agents left running at the worker stop were killed', { killed, survivors });
      if (state === 'announcing' && survivors.length === 0) await deletePresence();
    }
    await writes;
    announcement.close();
    hostLease?.close();
    process.exit(0);
  })();
});
// Signals meant for the worker reach this process too when sent to the group (a terminal's Ctrl-C, a
// service manager's stop): the worker decides when the warden ends, by closing its stdin.
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => {});
