import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import type { ProcessWatcher } from '@tributary/acp';
import { nodeEntryCommand } from '@tributary/acp';
import { PRESENCE, type Presence } from '@tributary/queue';
import type { Logger } from 'pino';
import { encodeCommand, parseReport, type WardenCommand, type WardenReport } from './warden-protocol.js';
import type { WardenSettings } from './warden-settings.js';

/** How often the worker tells its warden it is alive: well inside any sensible stall tolerance. */
const PULSE_MS = 250;
/** How long a stopping worker waits for its warden to confirm a presence change in Redis. */
const CONFIRM_WAIT_MS = 2_000;
/** How long a starting worker waits for its warden to start and Redis to confirm its presence. */
const ANNOUNCE_WAIT_MS = 30_000;

export interface AgentWardenEvents {
  /**
   * The warden killed this worker's agents and withdrew its presence for good (the worker froze or
   * lost Redis): its threads go to other workers, and the worker must stop.
   */
  revoked(why: string): void;
  /** The warden is gone: nothing would stop this worker's agents if it died now. */
  lost(error: Error): void;
}

/**
 * The worker's side of its agent warden (warden-main.ts): starts it, tells it each agent process
 * group (the pool calls `watch` right after a spawn, before `initialize`) and pulses it from the
 * event loop. It is also the worker's presence: the warden announces it, so a worker whose event
 * loop is busy for a while keeps its threads (docs/adr/0037).
 */
export class AgentWarden implements ProcessWatcher, Presence {
  readonly #child: ChildProcess;
  readonly #commands: Writable;
  readonly #logger: Logger;
  readonly #waiting = new Set<{
    wanted: (report: WardenReport) => boolean;
    settle: (outcome: 'confirmed' | 'late') => void;
  }>();
  #presence: string;
  #hostTicket: string | undefined;
  /** Redis confirmed a presence: a start that waits on past it waits on the agent host. */
  #announced = false;
  #pulse: NodeJS.Timeout | undefined;
  #stopping = false;

  /**
   * Starts the warden and resolves once Redis holds the worker's presence: a worker that claimed a
   * thread before that would see its own sweeper take the thread back.
   */
  static async start(
    settings: Omit<WardenSettings, 'presence'> & { takesDirect: boolean },
    logger: Logger,
    events: AgentWardenEvents,
  ): Promise<AgentWarden> {
    const { takesDirect, ...rest } = settings;
    // As WorkerPresence: a worker that reads no list of its own must not be pushed doorbells.
    const presence = takesDirect ? PRESENCE.taking : PRESENCE.retiring;
    const { command, args } = nodeEntryCommand(import.meta.url, './warden-main.ts');
    const child = spawn(command, args, {
      env: { ...process.env, TRIBUTARY_WARDEN: JSON.stringify({ ...rest, presence }) },
      // stdin: commands; stderr: what it says once the worker is gone; fd 3: its reports.
      stdio: ['pipe', 'ignore', 'inherit', 'pipe'],
      // A process group of its own: a signal to the worker's group (`kill -STOP -<pgid>`, a group
      // SIGKILL) must leave the warden free to kill the agents and withdraw the presence.
      detached: true,
    });
    await once(child, 'spawn');
    const warden = new AgentWarden(child, logger, events, presence);
    if ((await warden.#until((report) => report.kind === 'present', ANNOUNCE_WAIT_MS)) === 'confirmed') {
      return warden;
    }
    const exited = !warden.#alive;
    const announced = warden.#announced;
    await warden.close();
    if (exited) throw new Error('the agent warden exited as it started');
    if (announced && rest.agentHostSocket !== undefined) {
      throw new Error(
        `the agent host at ${rest.agentHostSocket} gave this worker's warden no lease within ${ANNOUNCE_WAIT_MS} ms; check that \`tributary agent-host\` runs and shares the socket's folder with the worker`,
      );
    }
    throw new Error(
      `the agent warden could not announce this worker in Redis within ${ANNOUNCE_WAIT_MS} ms; check REDIS_URL`,
    );
  }

  private constructor(child: ChildProcess, logger: Logger, events: AgentWardenEvents, presence: string) {
    this.#child = child;
    this.#commands = child.stdin!;
    this.#logger = logger;
    this.#presence = presence;
    this.#commands.on('error', (error) => logger.debug({ err: error }, 'warden stdin closed'));
    const reports = createInterface({ input: child.stdio[3] as Readable });
    reports.on('line', (line) => {
      const report = parseReport(line);
      if (report) this.#receive(report, events);
    });
    child.once('exit', (code, signal) => {
      clearInterval(this.#pulse);
      // A gone warden confirms nothing; nobody waits the whole bound for it.
      for (const waiter of this.#waiting) waiter.settle('late');
      if (this.#stopping) return;
      events.lost(new Error(`the agent warden exited (code ${code}, signal ${signal})`));
    });
    this.#send({ kind: 'pulse', presence: this.#presence });
    this.#pulse = setInterval(() => this.#send({ kind: 'pulse', presence: this.#presence }), PULSE_MS);
  }

  /** The announcement runs from the warden's start (it must precede the first claim); nothing to do. */
  start(): void {}

  /** Takes no more direct doorbells: resolves once Redis says so (bounded), so ringers stop pushing. */
  async retire(): Promise<void> {
    this.#presence = PRESENCE.retiring;
    const confirmed = this.#until(
      (report) => report.kind === 'announced' && report.presence === PRESENCE.retiring,
      CONFIRM_WAIT_MS,
    );
    this.#send({ kind: 'pulse', presence: this.#presence });
    if ((await confirmed) === 'late') {
      this.#logger.warn(
        { waitedMs: CONFIRM_WAIT_MS },
        'retirement not confirmed in Redis; ringers may push a little longer',
      );
    }
  }

  /** Stops the announcement and waits (bounded) until the warden deleted the presence key. */
  async stop(): Promise<void> {
    clearInterval(this.#pulse);
    if (!this.#alive) return;
    const withdrawn = this.#until((report) => report.kind === 'withdrawn', CONFIRM_WAIT_MS);
    this.#send({ kind: 'withdraw' });
    if ((await withdrawn) === 'late') {
      this.#logger.warn(
        { waitedMs: CONFIRM_WAIT_MS },
        'presence withdrawal not confirmed; it expires on its own',
      );
    }
  }

  /** The ticket of the agent host lease the warden holds now (AGENT_SANDBOX=agent-host). */
  get hostTicket(): string | undefined {
    return this.#hostTicket;
  }

  watch(pgid: number): void {
    this.#send({ kind: 'watch', pgid });
  }

  forget(pgid: number): void {
    this.#send({ kind: 'forget', pgid });
  }

  /** Ends the warden after a clean stop, when the agents are already gone. */
  async close(): Promise<void> {
    this.#stopping = true;
    clearInterval(this.#pulse);
    if (!this.#alive) return;
    const exited = once(this.#child, 'exit');
    this.#send({ kind: 'bye' });
    this.#commands.end();
    await exited;
  }

  get #alive(): boolean {
    return this.#child.exitCode === null && this.#child.signalCode === null;
  }

  /** Resolves 'confirmed' on the first report `wanted` accepts, 'late' after `timeoutMs`. */
  #until(wanted: (report: WardenReport) => boolean, timeoutMs: number): Promise<'confirmed' | 'late'> {
    return new Promise((resolve) => {
      const waiter = {
        wanted,
        settle: (outcome: 'confirmed' | 'late') => {
          clearTimeout(timer);
          this.#waiting.delete(waiter);
          resolve(outcome);
        },
      };
      const timer = setTimeout(() => waiter.settle('late'), timeoutMs);
      this.#waiting.add(waiter);
    });
  }

  #send(command: WardenCommand): void {
    if (this.#commands.writable) this.#commands.write(encodeCommand(command));
  }

  #receive(report: WardenReport, events: AgentWardenEvents): void {
    for (const waiter of this.#waiting) if (waiter.wanted(report)) waiter.settle('confirmed');
    if (report.kind === 'log') {
      this.#logger[report.level]({ ...report.fields, component: 'warden' }, report.msg);
    } else if (report.kind === 'announced') {
      this.#announced = true;
    } else if (report.kind === 'hostTicket') {
      this.#hostTicket = report.ticket;
    } else if (report.kind === 'revoked') {
      events.revoked(report.why);
    }
  }
}
