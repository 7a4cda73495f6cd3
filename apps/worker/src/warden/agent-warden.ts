import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import type { ProcessWatcher } from '@tributary/acp';
import { nodeEntryCommand } from '@tributary/agent';
import { PRESENCE, type Presence } from '@tributary/queue';
import type { Logger } from 'pino';
import { encodeCommand, parseReport, type WardenCommand, type WardenReport } from './warden-protocol.js';
import type { WardenSettings } from './warden-settings.js';

/** How often the worker tells its warden it is alive: well inside any sensible stall tolerance. */
const PULSE_MS = 250;
/** How long a stopping worker waits for its warden to confirm the presence is deleted. */
const WITHDRAW_WAIT_MS = 2_000;
/** How long a starting worker waits for its warden to start and Redis to confirm its presence. */
const ANNOUNCE_WAIT_MS = 30_000;

export interface AgentWardenEvents {
  /** The warden killed this worker's agents and withdrew its presence (the worker froze or lost Redis). */
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
  #presence: string;
  #pulse: NodeJS.Timeout | undefined;
  #stopping = false;
  #withdrawn: (() => void) | undefined;
  #present: (() => void) | undefined;

  /**
   * Starts the warden and resolves once Redis holds the worker's presence: a worker that claimed a
   * thread before that would see its own sweeper take the thread back.
   */
  static async start(
    settings: WardenSettings & { takesDirect: boolean },
    logger: Logger,
    events: AgentWardenEvents,
  ): Promise<AgentWarden> {
    const { command, args } = nodeEntryCommand(import.meta.url, './warden-main.ts');
    const child = spawn(command, args, {
      env: { ...process.env, TRIBUTARY_WARDEN: JSON.stringify(settings) },
      // stdin: commands; stderr: what it says once the worker is gone; fd 3: its reports.
      stdio: ['pipe', 'ignore', 'inherit', 'pipe'],
    });
    await once(child, 'spawn');
    const warden = new AgentWarden(child, logger, events, settings.takesDirect);
    const present = new Promise<void>((resolve) => {
      warden.#present = resolve;
    });
    warden.#startPulse();
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>(
      (resolve) => (timer = setTimeout(() => resolve('late'), ANNOUNCE_WAIT_MS)),
    );
    const exited = once(child, 'exit').then(() => 'exited' as const);
    const outcome = await Promise.race([present.then(() => 'present' as const), late, exited]);
    clearTimeout(timer);
    if (outcome !== 'present') {
      await warden.close();
      throw new Error(
        outcome === 'late'
          ? `the agent warden could not announce this worker in Redis within ${ANNOUNCE_WAIT_MS} ms; check REDIS_URL`
          : 'the agent warden exited as it started',
      );
    }
    return warden;
  }

  private constructor(child: ChildProcess, logger: Logger, events: AgentWardenEvents, takesDirect: boolean) {
    this.#child = child;
    // As WorkerPresence: a worker that reads no list of its own must not be pushed doorbells.
    this.#presence = takesDirect ? PRESENCE.taking : PRESENCE.retiring;
    this.#commands = child.stdin!;
    this.#logger = logger;
    this.#commands.on('error', (error) => logger.debug({ err: error }, 'warden stdin closed'));
    const reports = createInterface({ input: child.stdio[3] as Readable });
    reports.on('line', (line) => {
      const report = parseReport(line);
      if (report) this.#receive(report, events);
    });
    child.once('exit', (code, signal) => {
      clearInterval(this.#pulse);
      this.#withdrawn?.();
      if (this.#stopping) return;
      events.lost(new Error(`the agent warden exited (code ${code}, signal ${signal})`));
    });
  }

  /** The announcement runs from the warden's start (it must precede the first claim); nothing to do. */
  start(): void {}

  #startPulse(): void {
    this.#send({ kind: 'pulse', presence: this.#presence });
    this.#pulse = setInterval(() => this.#send({ kind: 'pulse', presence: this.#presence }), PULSE_MS);
  }

  async retire(): Promise<void> {
    this.#presence = PRESENCE.retiring;
    this.#send({ kind: 'pulse', presence: this.#presence });
  }

  /** Stops the announcement and waits (bounded) until the warden deleted the presence key. */
  async stop(): Promise<void> {
    clearInterval(this.#pulse);
    if (this.#child.exitCode !== null) return;
    const withdrawn = new Promise<void>((resolve) => {
      this.#withdrawn = resolve;
    });
    this.#send({ kind: 'withdraw' });
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      withdrawn,
      new Promise((resolve) => (timer = setTimeout(resolve, WITHDRAW_WAIT_MS))),
    ]);
    clearTimeout(timer);
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
    if (this.#child.exitCode !== null || this.#child.signalCode !== null) return;
    const exited = once(this.#child, 'exit');
    this.#send({ kind: 'bye' });
    this.#commands.end();
    await exited;
  }

  #send(command: WardenCommand): void {
    if (this.#commands.writable) this.#commands.write(encodeCommand(command));
  }

  #receive(report: WardenReport, events: AgentWardenEvents): void {
    switch (report.kind) {
      case 'log':
        this.#logger[report.level]({ ...report.fields, component: 'warden' }, report.msg);
        return;
      case 'revoked':
        events.revoked(report.why);
        return;
      case 'withdrawn':
        this.#withdrawn?.();
        return;
      case 'present':
        this.#present?.();
        return;
    }
  }
}
