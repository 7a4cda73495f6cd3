// docker-compose.yml's structure: the services and their wiring, Redis durability flags and password, start order on health, grace periods matched to
// the worker's shutdown hand-off, the agents' container beside the workers holding none of their
// secrets, mounted files present, known variables only, and no committed secret values, in a syntax
// Docker Compose and podman-compose read alike. test/deploy/compose.e2e.test.ts
// starts it.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import {
  AGENT_CREDENTIAL_ENV,
  agentHostEnvNames,
  DEFAULTS,
  DESIGN_ENV,
  knownEnvNames,
  PLATFORM_ENV,
  SECRET_ENV,
} from '../../infra/k8s/env-contract.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const composeText = readFileSync(join(root, 'docker-compose.yml'), 'utf8');
const agentText = readFileSync(join(root, 'docker-compose.agent.yml'), 'utf8');
const example = readFileSync(join(root, '.env.example'), 'utf8');
/** .env.example's `KEY=value` lines. */
const exampleEntries = new Map(
  example
    .split('\n')
    .filter((line) => /^[A-Z][A-Z0-9_]*=/.test(line))
    .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)] as const),
);
const interpolations = (text: string) =>
  [...text.matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*)/g)].map((m) => m[1]!);
/** Build args of infra/docker/Dockerfile that the agent override interpolates. */
const AGENT_BUILD_ARGS = ['AGENT_NPM_PACKAGES', 'AGENT_APT_PACKAGES'];

interface Service {
  image?: string;
  build?: { context: string; dockerfile: string; args?: Record<string, string> };
  command?: string[];
  environment?: Record<string, string | number>;
  ports?: string[];
  volumes?: string[];
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string };
  stop_grace_period?: string;
  deploy?: { replicas?: number };
  security_opt?: string[];
}

// Compose merges `<<: *anchor` keys, so the test reads the file the way compose does.
const compose = parse(composeText, { merge: true }) as { services: Record<string, Service> };
const services = compose.services;
const tributary = Object.entries(services).filter(
  ([, s]) => s.build?.dockerfile === 'infra/docker/Dockerfile',
);
const byCommand = (command: string) => tributary.filter(([, s]) => s.command?.[0] === command);
/** The Tributary processes that use Redis: all but the agent host, which must not hold its password. */
const redisUsers = tributary.filter(([, s]) => s.command?.[0] !== 'agent-host');

/** Compose durations ("45s", "1m30s") in milliseconds. */
function durationMs(value: string): number {
  let total = 0;
  for (const [, amount, unit] of value.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)) {
    total += Number(amount) * { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[unit as 'ms' | 's' | 'm' | 'h'];
  }
  return total;
}

describe('docker-compose.yml', () => {
  it('keeps to syntax podman-compose reads as Docker Compose does', () => {
    // podman-compose leaves `${VAR:-}` (an empty default) unsubstituted.
    expect(composeText).not.toMatch(/\$\{[A-Za-z_][A-Za-z0-9_]*:?-\}/);
    // It consumes a list-form test while starting the first replica, breaking the next one.
    for (const [name, service] of Object.entries(services)) {
      if (service.healthcheck) expect(typeof service.healthcheck.test, name).toBe('string');
    }
  });

  it('has Redis, ingress, at least two workers, Prometheus and Grafana', () => {
    expect(Object.keys(services)).toEqual(
      expect.arrayContaining(['redis', 'ingress', 'worker', 'prometheus', 'grafana']),
    );
    expect(byCommand('ingress')).toHaveLength(1);
    const workers = byCommand('worker').reduce((sum, [, s]) => sum + (s.deploy?.replicas ?? 1), 0);
    expect(workers).toBeGreaterThanOrEqual(2);
    for (const [, service] of tributary) {
      expect(service.build!.context).toBe('.');
      expect(existsSync(join(root, service.build!.dockerfile))).toBe(true);
    }
  });

  it('runs the official Redis image with AOF always, maxmemory and noeviction, a password, on a volume', () => {
    const redis = services.redis!;
    // Official images have no namespace ("redis:7.4", not "someone/redis").
    expect(redis.image).toMatch(/^redis:\d/);
    const flags = redis.command!.join(' ');
    expect(flags).toContain('--appendonly yes');
    expect(flags).toContain('--appendfsync always');
    expect(flags).toMatch(/--maxmemory \d+mb/);
    expect(flags).toContain('--maxmemory-policy noeviction');
    expect(flags).toContain('--requirepass "$$REDIS_PASSWORD"');
    // No password, no Redis: an empty one would switch authentication off.
    expect(flags).toContain('test -n "$$REDIS_PASSWORD" ||');
    const password = `\${REDIS_PASSWORD}`;
    expect(redis.environment).toMatchObject({ REDIS_PASSWORD: password });
    for (const [name, service] of redisUsers) {
      expect(service.environment?.REDIS_URL, name).toBe(`redis://:${password}@redis:6379`);
    }
    expect(redis.volumes).toContainEqual(expect.stringMatching(/^[\w-]+:\/data$/));
    const volume = redis.volumes!.find((v) => v.endsWith(':/data'))!.split(':')[0]!;
    expect(Object.keys((compose as { volumes?: object }).volumes ?? {})).toContain(volume);
    expect(redis.healthcheck?.test).toContain('redis-cli ping');
  });

  it('starts every Tributary process after Redis is healthy, and waits only on services with a health check', () => {
    for (const [name, service] of redisUsers) {
      expect(service.depends_on?.redis?.condition, name).toBe('service_healthy');
    }
    for (const [name, service] of Object.entries(services)) {
      for (const [dependency, { condition }] of Object.entries(service.depends_on ?? {})) {
        expect(services[dependency], `${name} depends on ${dependency}`).toBeDefined();
        if (condition === 'service_healthy') {
          expect(services[dependency]!.healthcheck, `${dependency} needs a healthcheck`).toBeDefined();
        }
      }
    }
  });

  it('publishes ingress on PORT 8080 and gives each worker METRICS_PORT 9464 and a grace period for its hand-off', () => {
    const [, ingress] = byCommand('ingress')[0]!;
    expect(String(ingress.environment!.PORT)).toBe(String(DEFAULTS.PORT));
    expect(ingress.ports).toContain(`${DEFAULTS.PORT}:${DEFAULTS.PORT}`);
    expect(ingress.healthcheck?.test).toContain(`:${DEFAULTS.PORT}/readyz`);
    // The admin listener (/metrics, the admin API, the console): its own port, published on loopback.
    expect(String(ingress.environment!.ADMIN_PORT)).toBe(String(DEFAULTS.ADMIN_PORT));
    expect(ingress.environment!.ADMIN_HOST).toBe('0.0.0.0');
    expect(ingress.ports).toContain(`127.0.0.1:${DEFAULTS.ADMIN_PORT}:${DEFAULTS.ADMIN_PORT}`);
    for (const [name, worker] of byCommand('worker')) {
      const env = worker.environment!;
      expect(String(env.METRICS_PORT), name).toBe(String(DEFAULTS.METRICS_PORT));
      expect(worker.healthcheck?.test).toContain(`:${DEFAULTS.METRICS_PORT}/readyz`);
      // Docker sends SIGKILL after stop_grace_period: it must cover the turns' grace and the cancel.
      const grace = Number(env.SHUTDOWN_GRACE_MS ?? DEFAULTS.SHUTDOWN_GRACE_MS);
      const cancel = Number(env.CANCEL_TIMEOUT_MS ?? DEFAULTS.CANCEL_TIMEOUT_MS);
      expect(durationMs(worker.stop_grace_period ?? '10s')).toBeGreaterThanOrEqual(grace + cancel);
    }
  });

  it('runs every worker’s agents in the agents service: none of their secrets, the socket and workspaces shared', () => {
    const [[name, agents]] = byCommand('agent-host') as [[string, Service]];
    const env = agents.environment!;
    const allowed = agentHostEnvNames();
    expect(Object.keys(env).filter((variable) => !allowed.has(variable))).toEqual([]);
    // Each agent sandboxed there unless the operator says otherwise, with the fresh /proc it mounts.
    // biome-ignore lint/suspicious/noTemplateCurlyInString: compose's own substitution, as written
    expect(env.AGENT_SANDBOX).toBe('${AGENTS_SANDBOX:-bubblewrap}');
    expect(agents.security_opt).toEqual(['systempaths=unconfined']);
    expect(example).toMatch(/^AGENTS_SANDBOX=bubblewrap$/m);
    const socket = String(env.AGENT_HOST_SOCKET);
    const socketDir = socket.slice(0, socket.lastIndexOf('/'));
    const named = (service: Service, path: string) =>
      service.volumes?.find((v) => v.endsWith(`:${path}`))?.split(':')[0];
    const volumes = Object.keys((compose as { volumes?: object }).volumes ?? {});
    expect(volumes).toContain(named(agents, socketDir));
    const workers = byCommand('worker');
    expect(workers.length).toBeGreaterThan(0);
    for (const [workerName, worker] of workers) {
      const workerEnv = worker.environment!;
      expect(workerEnv.AGENT_SANDBOX, workerName).toBe('agent-host');
      expect(workerEnv.AGENT_HOST_SOCKET, workerName).toBe(socket);
      expect(named(worker, socketDir), workerName).toBe(named(agents, socketDir));
      // A worker names a thread's room by its own path: the same volume at the same path in both.
      const root = String(workerEnv.AGENT_WORKSPACES);
      expect(named(worker, root), workerName).toBeDefined();
      expect(volumes).toContain(named(worker, root));
      expect(named(agents, root), name).toBe(named(worker, root));
      // The worker asks the agent host before it starts.
      expect(worker.depends_on?.[name]?.condition, workerName).toBe('service_healthy');
    }
    expect(agents.healthcheck?.test).toContain(socket);
  });

  it('mounts the Prometheus config and rules and the Grafana provisioning and dashboards from the repository', () => {
    const prometheus = services.prometheus!.volumes!;
    expect(prometheus).toContain('./infra/prometheus/prometheus.yml:/etc/prometheus/prometheus.yml:ro');
    expect(prometheus).toContain('./infra/prometheus/rules.yml:/etc/prometheus/rules.yml:ro');
    const grafana = services.grafana!;
    expect(grafana.volumes).toContain('./infra/grafana/provisioning:/etc/grafana/provisioning:ro');
    expect(grafana.volumes).toContain('./infra/grafana/dashboards:/var/lib/grafana/dashboards:ro');
    expect(grafana.environment).toMatchObject({
      GF_AUTH_ANONYMOUS_ENABLED: 'true',
      GF_AUTH_ANONYMOUS_ORG_ROLE: 'Viewer',
    });
    for (const [name, service] of Object.entries(services)) {
      for (const volume of service.volumes ?? []) {
        const source = volume.split(':')[0]!;
        if (source.startsWith('./')) expect(existsSync(join(root, source)), `${name}: ${source}`).toBe(true);
      }
    }
  });

  it('wires every DESIGN §10 variable that applies and sets no unknown one', () => {
    const known = knownEnvNames();
    const wired = new Set<string>();
    for (const [name, service] of tributary) {
      for (const variable of Object.keys(service.environment ?? {})) {
        expect(known.has(variable), `${name}: ${variable} is not a known variable`).toBe(true);
        wired.add(variable);
      }
    }
    expect(DESIGN_ENV.filter((variable) => !wired.has(variable))).toEqual([]);
    // Interpolations read the user's .env or shell: each names a known variable.
    expect(interpolations(composeText).filter((variable) => !known.has(variable))).toEqual([]);
  });

  it('passes every platform variable to ingress and each worker, each offered in .env.example', () => {
    for (const [name, service] of [...byCommand('ingress'), ...byCommand('worker')]) {
      const missing = PLATFORM_ENV.filter(
        (variable) => service.environment?.[variable] !== `\${${variable}}`,
      );
      expect(missing, name).toEqual([]);
    }
    expect(PLATFORM_ENV.filter((variable) => !exampleEntries.has(variable))).toEqual([]);
  });

  it('commits no secret values: secrets come from .env, empty when unset', () => {
    // REDIS_URL is composed from the password (above); METRICS_TOKEN is not used on one machine.
    const secrets = [
      ...SECRET_ENV.filter((name) => name !== 'REDIS_URL' && name !== 'METRICS_TOKEN'),
      'REDIS_PASSWORD',
    ];
    for (const [name, service] of Object.entries(services)) {
      for (const secret of secrets) {
        const value = service.environment?.[secret];
        if (value !== undefined) expect(value, `${name}: ${secret}`).toBe(`\${${secret}}`);
      }
    }
    for (const secret of secrets) expect(exampleEntries.get(secret), `.env.example ${secret}`).toBe('');
    // Every variable .env.example offers is one compose reads, with or without the agent override.
    const interpolated = new Set([...interpolations(composeText), ...interpolations(agentText)]);
    expect([...exampleEntries.keys()].filter((variable) => !interpolated.has(variable))).toEqual([]);
    const ignored = readFileSync(join(root, '.gitignore'), 'utf8').split('\n');
    expect(ignored).toContain('.env');
  });
});

describe('docker-compose.agent.yml', () => {
  const agent = (parse(agentText) as { services: Record<string, Service> }).services;

  it('rebuilds only the agents service, into an image of its own, with the agent build args the Dockerfile declares', () => {
    expect(Object.keys(agent).sort()).toEqual(['agents', 'worker']);
    const agents = agent.agents!;
    expect(services.agents!.command).toEqual(['agent-host']);
    expect(agents.image).toBeDefined();
    expect(agents.image).not.toBe(services.agents!.image);
    // The workers start no agent themselves: they keep the plain image.
    expect(agent.worker!.image).toBeUndefined();
    expect(agent.worker!.build).toBeUndefined();
    const dockerfile = readFileSync(join(root, 'infra/docker/Dockerfile'), 'utf8');
    expect(Object.keys(agents.build!.args!).sort()).toEqual([...AGENT_BUILD_ARGS].sort());
    for (const [arg, value] of Object.entries(agents.build!.args!)) {
      expect(value).toBe(`\${${arg}}`);
      expect(dockerfile).toMatch(new RegExp(`^ARG ${arg}=""$`, 'm'));
      expect(exampleEntries.get(arg), `.env.example ${arg}`).toBe('');
    }
  });

  it('hands the worker the agent settings and every agent key from .env, keys empty in .env.example', () => {
    const env = agent.worker!.environment!;
    const known = knownEnvNames();
    for (const [variable, value] of Object.entries(env)) {
      expect(known.has(variable), `${variable} is not a known variable`).toBe(true);
      // Everything comes from .env: nothing set here overrides what the user chose.
      expect(value, variable).toBe(`\${${variable}}`);
      expect(exampleEntries.has(variable), `.env.example offers ${variable}`).toBe(true);
    }
    for (const variable of [
      'AGENT_AUTH_METHOD',
      'AGENT_ENV',
      'AGENT_INIT_TIMEOUT_MS',
      ...AGENT_CREDENTIAL_ENV,
    ]) {
      expect(Object.keys(env)).toContain(variable);
    }
    // AGENT_COMMAND comes from the base file, so the plain stack can name an agent too.
    expect(services.worker!.environment!.AGENT_COMMAND).toBe(`\${AGENT_COMMAND}`);
    for (const key of AGENT_CREDENTIAL_ENV) expect(exampleEntries.get(key), `.env.example ${key}`).toBe('');
    // No key reaches ingress or any other service.
    for (const [name, service] of Object.entries(services)) {
      for (const key of AGENT_CREDENTIAL_ENV)
        expect(service.environment?.[key], `${name}: ${key}`).toBeUndefined();
    }
    expect(interpolations(agentText).filter((v) => !known.has(v) && !AGENT_BUILD_ARGS.includes(v))).toEqual(
      [],
    );
  });

  it('keeps to syntax podman-compose reads as Docker Compose does', () => {
    expect(agentText).not.toMatch(/\$\{[A-Za-z_][A-Za-z0-9_]*:?-\}/);
    expect(services.worker!.environment!.HOME).toBe('/home/node');
    expect(services.worker!.volumes).toContain('/home/node');
    // Unsandboxed in the agent host, an agent's HOME is its room's, on the shared workspace volume:
    // the agents service has no HOME of its own to write.
    expect(services.agents!.volumes).toEqual(['agent-host:/run/tributary', 'workspaces:/workspaces']);
  });
});
