// Real `tributary ingress` and `tributary worker` processes around a published agent: a private Redis,
// the fake platform API for replies, the fake model API for the agent. Messages go in signed through
// ingress, as a chat platform's would.
import { execFileSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import {
  type FakePlatformApi,
  freePort,
  type RedisHandle,
  startFakePlatformApi,
  startRedis,
  uniquePrefix,
  waitFor,
} from '@tributary/testkit';
import { postGatewayMessage, replyTo } from '../deploy/gateway-message.js';
import { type CliProcess, startCli } from '../support/cli-process.js';
import type { AgentProfile } from './agent-profiles.js';
import type { FakeModelServer, ModelRequest } from './fake-model-server.js';

export interface FleetWorker {
  cli: CliProcess;
  metricsUrl: string;
}

export class AgentFleet {
  readonly #workers: FleetWorker[] = [];
  #ingress?: CliProcess;
  #ingressUrl = '';

  private constructor(
    readonly profile: AgentProfile,
    readonly model: FakeModelServer,
    readonly platform: FakePlatformApi,
    readonly redis: RedisHandle,
    readonly prefix: string,
    /** PATH with the agents, and a HOME of the run's own. */
    readonly env: Record<string, string>,
    readonly secret: string,
  ) {}

  static async start(profile: AgentProfile, model: FakeModelServer, env: Record<string, string>) {
    const redis = await startRedis({ private: true });
    const secret = randomBytes(16).toString('hex');
    const fleet = new AgentFleet(
      profile,
      model,
      await startFakePlatformApi({ gatewaySecret: secret }),
      redis,
      uniquePrefix(`agents-${profile.name}`),
      env,
      secret,
    );
    await fleet.#startIngress();
    return fleet;
  }

  get #common(): Record<string, string> {
    return {
      ...this.env,
      REDIS_URL: this.redis.url,
      REDIS_PREFIX: this.prefix,
      GATEWAY_SECRET: this.secret,
      GATEWAY_REPLY_URL: this.platform.urls.gatewayReply,
      LOG_LEVEL: 'info',
    };
  }

  async #startIngress(): Promise<void> {
    const port = await freePort();
    this.#ingressUrl = `http://127.0.0.1:${port}`;
    this.#ingress = startCli('ingress', {
      ...this.#common,
      PORT: String(port),
      HOST: '127.0.0.1',
      ADMIN_PORT: String(await freePort()),
    });
    await ready(this.#ingressUrl, 'ingress');
  }

  /** A worker with the profile's agent; `env` adds or overrides variables (spares, policies). */
  async startWorker(env: Record<string, string> = {}): Promise<FleetWorker> {
    const port = await freePort();
    const cwd = join(this.env.HOME!, 'work');
    await mkdir(cwd, { recursive: true });
    const cli = startCli('worker', {
      ...this.#common,
      ...this.profile.workerEnv,
      METRICS_PORT: String(port),
      AGENT_WORKSPACES: cwd,
      // The profiles set the agents up in the run's HOME, which a sandbox replaces by each thread's.
      AGENT_SANDBOX: 'off',
      AGENT_INIT_TIMEOUT_MS: '120000',
      SHUTDOWN_GRACE_MS: '0',
      ...env,
    });
    const worker = { cli, metricsUrl: `http://127.0.0.1:${port}` };
    this.#workers.push(worker);
    await ready(worker.metricsUrl, 'worker');
    return worker;
  }

  /** Waits until the worker holds `count` initialized spare agents. */
  async sparesReady(worker: FleetWorker, count: number): Promise<void> {
    await waitFor(
      async () => {
        const text = await (await fetch(`${worker.metricsUrl}/metrics`)).text();
        return Number(/^tributary_agent_spares_ready (\S+)$/m.exec(text)?.[1] ?? 0) >= count;
      },
      { what: 'a warm spare', timeoutMs: 180_000, intervalMs: 200 },
    );
  }

  /** Posts a message to a thread; resolves with its event id and the moment ingress acknowledged it. */
  async send(thread: string, text: string): Promise<{ eventId: string; ackAt: number }> {
    const eventId = await postGatewayMessage(this.#ingressUrl, this.secret, thread, text);
    return { eventId, ackAt: Date.now() };
  }

  /** Posts a control command (/cancel) to a thread. */
  async control(thread: string, command: string): Promise<void> {
    await postGatewayMessage(this.#ingressUrl, this.secret, thread, command, 'control');
  }

  reply(eventId: string, timeoutMs = 180_000): Promise<string> {
    return replyTo(this.platform, eventId, timeoutMs);
  }

  /** When the reply to a message reached the platform (epoch ms). */
  replyAt(eventId: string): number | undefined {
    return this.platform
      .calls()
      .find((c) => c.method === 'reply' && (c.body as { reply_to?: string }).reply_to === eventId)?.at;
  }

  /** Model requests whose conversation holds `marker`, in arrival order. */
  requestsWith(marker: string): ModelRequest[] {
    return this.model.requests.filter((r) => r.userTexts.some((text) => text.includes(marker)));
  }

  async firstRequestWith(marker: string, timeoutMs = 180_000): Promise<ModelRequest> {
    return waitFor(() => this.requestsWith(marker)[0], { what: `a model request with ${marker}`, timeoutMs });
  }

  async close(): Promise<void> {
    for (const worker of this.#workers) await worker.cli.stop();
    await this.#ingress?.stop();
    await this.platform.close();
    await this.redis.stop();
  }
}

async function ready(url: string, what: string): Promise<void> {
  await waitFor(async () => (await fetch(`${url}/readyz`).catch(() => undefined))?.ok === true, {
    what: `${what} /readyz`,
    timeoutMs: 120_000,
    intervalMs: 200,
  });
}

export const marker = (what: string) => `${what}-${randomUUID().slice(0, 8)}`;

interface ProcessRow {
  pid: number;
  ppid: number;
  pgid: number;
  sid: number;
  args: string;
}

/** Every process below `pid` (children, grandchildren, …) with its process group and session. */
export function descendants(pid: number): ProcessRow[] {
  const table = psTable();
  const found: ProcessRow[] = [];
  const parents = new Set([pid]);
  let grew = true;
  while (grew) {
    grew = false;
    for (const row of table) {
      if (parents.has(row.ppid) && !parents.has(row.pid)) {
        parents.add(row.pid);
        found.push(row);
        grew = true;
      }
    }
  }
  return found;
}

/** Processes alive in any of these process groups. */
export function aliveInGroups(pgids: ReadonlySet<number>): { pid: number; args: string }[] {
  return psTable().filter((row) => pgids.has(row.pgid));
}

function psTable(): ProcessRow[] {
  return execFileSync('ps', ['-eo', 'pid=,ppid=,pgid=,sid=,stat=,args='], { encoding: 'utf8' })
    .split('\n')
    .map((line) => /^\s*(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\S+)\s+(.*)$/.exec(line))
    .filter((m): m is RegExpExecArray => m !== null && !m[5]!.startsWith('Z'))
    .map((m) => ({
      pid: Number(m[1]),
      ppid: Number(m[2]),
      pgid: Number(m[3]),
      sid: Number(m[4]),
      args: m[6]!,
    }));
}

export const newThread = () => `thread-${randomUUID().slice(0, 8)}`;
