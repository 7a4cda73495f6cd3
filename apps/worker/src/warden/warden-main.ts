/**
 * The agent warden: a small process each worker starts beside itself (docs/adr/0037). It holds the
 * worker's presence in Redis and the list of its agents' process groups, and kills those groups
 * when the worker dies (its stdin closes without `bye`), stops answering (no pulse within the stall
 * tolerance) or can no longer be announced (Redis did not confirm the presence in time), before
 * another worker can take the worker's threads over. Configured by TRIBUTARY_WARDEN (JSON).
 */
import { createWriteStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { PresenceWriter } from '@tributary/queue/presence';
import { killAgents } from './process-groups.js';
import { presenceDue, trustAfterWrite, wardenVerdict } from './warden-policy.js';
import { encodeReport, parseCommand, type WardenReport } from './warden-protocol.js';
import { parseWardenSettings } from './warden-settings.js';

const TICK_MS = 100;
const DELETE_ATTEMPTS = 5;
const DELETE_RETRY_MS = 200;
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
const announcement = new PresenceWriter(settings.redisUrl, settings.prefix, settings.owner, (error) => {
  // Said once per kind of error: a Redis outage must not flood the log at every reconnect.
  if (error.message === redisError) return;
  redisError = error.message;
  log('warn', 'warden cannot reach Redis', { err: error.message });
});

const groups = new Set<number>();
let presence = '1';
let withdrawn = false;
let revoked = false;
let announced = false;
const start = performance.now();
const clock = { lastPulseAt: start, trustedUntil: start + stallToleranceMs, lastWriteAt: -Infinity };

async function writePresence(): Promise<void> {
  const sentAt = performance.now();
  clock.lastWriteAt = sentAt;
  try {
    await announcement.write(presence, presenceTtlMs);
    clock.trustedUntil = trustAfterWrite(sentAt, presenceTtlMs);
    redisError = undefined;
    revoked = false;
    if (!announced) {
      announced = true;
      report({ kind: 'present' });
    }
  } catch {
    // Reported by the connection's error listener; the verdict decides what an unconfirmed write means.
  }
}

/**
 * Deletes the presence so other workers take the threads now rather than at its expiry; a few tries,
 * since the connection may be between reconnects (a failed delete only delays the takeover).
 */
async function deletePresence(): Promise<void> {
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
}

async function revoke(why: string): Promise<void> {
  revoked = true;
  const killed = [...groups];
  // Told first, so the worker hands its turns back rather than counting the kills as failures.
  report({ kind: 'revoked', why });
  const survivors = await killAgents(killed);
  log('error', `${why}: killed its agents and withdrew its presence, so other workers can take its threads`, {
    killed,
    survivors,
  });
  await deletePresence();
}

const ticker = setInterval(() => {
  if (withdrawn) return;
  const now = performance.now();
  if (!revoked) {
    const verdict = wardenVerdict(now, clock, stallToleranceMs);
    if (verdict.kind === 'revoke') {
      void revoke(verdict.why);
      return;
    }
  }
  if (presenceDue(now, clock, stallToleranceMs, presenceTtlMs)) void writePresence();
}, TICK_MS);

let goodbye = false;
const commands = createInterface({ input: process.stdin });
commands.on('line', (line) => {
  const command = parseCommand(line);
  switch (command?.kind) {
    case 'watch':
      groups.add(command.pgid);
      return;
    case 'forget':
      groups.delete(command.pgid);
      return;
    case 'pulse':
      clock.lastPulseAt = performance.now();
      presence = command.presence;
      return;
    case 'withdraw':
      withdrawn = true;
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
    if (groups.size > 0) {
      const killed = [...groups];
      const survivors = await killAgents(killed);
      if (!goodbye) {
        log(
          'error',
          'the worker died: killed its agents and withdrew its presence, so other workers take its threads now',
          {
            killed,
            survivors,
          },
        );
      } else log('warn', 'agents left running at the worker stop were killed', { killed, survivors });
    }
    if (!goodbye) await deletePresence();
    announcement.close();
    process.exit(0);
  })();
});
// The worker's Ctrl-C reaches this process too; the worker decides when the warden ends.
process.on('SIGINT', () => {});
