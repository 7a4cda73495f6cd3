// The image as it ships: built from infra/docker/Dockerfile, its ingress and worker run as containers
// (read-only root, non-root user, no capabilities, host networking) against a real Redis. A signed
// message goes in through the container's ingress and the built-in agent's reply comes out through the
// container's worker; SIGTERM stops both with exit 0, and a turn cut short by it is handed back and
// answered by the next worker.
import { randomBytes } from 'node:crypto';
import {
  type FakePlatformApi,
  freePort,
  type RedisHandle,
  startFakePlatformApi,
  startRedis,
  uniquePrefix,
  waitFor,
} from '@tributary/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postGatewayMessage, replyTo } from './gateway-message.js';
import { buildImage, exitCode, IMAGE, podman, podmanProblem, preparePodman } from './podman.js';

const problem = podmanProblem();

if (problem) {
  it('runs the image under podman', () => {
    throw new Error(`the image cannot be tested on this machine: ${problem}`);
  });
} else {
  describe('the image (podman)', () => {
    const secret = randomBytes(16).toString('hex');
    const run = `trib-image-${randomBytes(3).toString('hex')}`;
    const containers: string[] = [];
    let redis: RedisHandle;
    let api: FakePlatformApi;
    let ingressUrl: string;
    let prefix: string;

    /** A container of the image, detached, hardened as the manifests run it, on the host's network. */
    async function start(name: string, command: string, env: Record<string, string>): Promise<string> {
      const container = `${run}-${name}`;
      containers.push(container);
      const flags = Object.entries(env).flatMap(([key, value]) => ['--env', `${key}=${value}`]);
      await podman(
        'run',
        '--detach',
        '--name',
        container,
        '--network',
        'host',
        '--read-only',
        '--tmpfs',
        '/tmp',
        '--cap-drop',
        'ALL',
        '--security-opt',
        'no-new-privileges',
        ...flags,
        IMAGE,
        command,
      );
      return container;
    }

    const logs = (container: string) => podman('logs', container);

    async function ready(url: string, what: string): Promise<void> {
      await waitFor(async () => (await fetch(`${url}/readyz`).catch(() => undefined))?.ok === true, {
        what,
        timeoutMs: 60_000,
        intervalMs: 200,
      });
    }

    async function startWorker(name: string): Promise<string> {
      const port = await freePort();
      const worker = await start(name, 'worker', {
        REDIS_URL: redis.url,
        REDIS_PREFIX: prefix,
        GATEWAY_SECRET: secret,
        GATEWAY_REPLY_URL: api.urls.gatewayReply,
        METRICS_PORT: String(port),
        AGENT_WORKSPACES: '/tmp/workspaces',
        // The built-in agent keeps its sessions under HOME; here only /tmp is writable.
        HOME: '/tmp',
        // This test is about the worker's own shutdown, not isolation (compose.e2e.test.ts runs the
        // agents in a container of their own): the agents run beside the worker here.
        AGENT_SANDBOX: 'off',
        // The test's messages script the built-in agent (a slow turn to cut short with SIGTERM).
        AGENT_ENV: 'TRIBUTARY_AGENT_SCRIPTING',
        TRIBUTARY_AGENT_SCRIPTING: 'on',
        SHUTDOWN_GRACE_MS: '500',
        LOG_LEVEL: 'info',
      });
      await ready(`http://127.0.0.1:${port}`, `worker ${name} /readyz`);
      return worker;
    }

    beforeAll(async () => {
      await preparePodman();
      await buildImage();
      redis = await startRedis({ private: true });
      api = await startFakePlatformApi({ gatewaySecret: secret });
      prefix = uniquePrefix('image');
    }, 900_000);

    afterAll(async () => {
      if (containers.length) await podman('rm', '--force', ...containers).catch(() => undefined);
      await api?.close();
      await redis?.stop();
    });

    it('holds no test tooling: no testcontainers, no test harness, and `tributary dev` says why', async () => {
      const output = await podman(
        'run',
        '--rm',
        '--entrypoint',
        'sh',
        IMAGE,
        '-c',
        'for m in testcontainers dockerode ssh2 @grpc/grpc-js @tributary/testkit; do test -e node_modules/$m && echo "has $m"; done; echo checked',
      );
      expect(output.trim()).toBe('checked');
      const dev = await podman('run', '--rm', IMAGE, 'dev').then(
        () => 'exited 0',
        (error: Error) => error.message,
      );
      expect(dev).toContain('this installation has no development tools');
    });

    it('runs compiled JavaScript as the node user, without a writable root', async () => {
      const output = await podman(
        'run',
        '--rm',
        '--read-only',
        '--entrypoint',
        'sh',
        IMAGE,
        '-c',
        'id -u; find apps packages -path "*/src/*.ts" | wc -l; ls apps/cli/src/main.js; touch x 2>/dev/null || echo read-only',
      );
      expect(output.split('\n')).toEqual(['1000', '0', 'apps/cli/src/main.js', 'read-only', '']);
    });

    it('answers through ingress and worker containers, and hands a running turn back on SIGTERM', async () => {
      const port = await freePort();
      ingressUrl = `http://127.0.0.1:${port}`;
      const ingress = await start('ingress', 'ingress', {
        REDIS_URL: redis.url,
        REDIS_PREFIX: prefix,
        PORT: String(port),
        HOST: '127.0.0.1',
        GATEWAY_SECRET: secret,
      });
      await ready(ingressUrl, 'ingress /readyz');
      const worker = await startWorker('worker');

      const hello = await postGatewayMessage(ingressUrl, secret, 'image-1', 'hello from the image test');
      expect(await replyTo(api, hello, 60_000)).toContain('hello from the image test');

      // A turn that outlasts the shutdown grace: SIGTERM cancels it and hands its thread back.
      const slow = await postGatewayMessage(
        ingressUrl,
        secret,
        'image-2',
        'slow one\n@agent {"delayMs": 8000}',
      );
      await waitFor(async () => (await logs(worker)).includes('"msg":"dispatch"'), {
        what: 'the slow turn to start',
        timeoutMs: 30_000,
        intervalMs: 250,
      });
      await podman('kill', '--signal', 'TERM', worker, ingress);
      expect(await exitCode(worker)).toBe(0);
      expect(await exitCode(ingress)).toBe(0);
      const workerLogs = await logs(worker);
      expect(workerLogs).toContain('worker stopped; threads handed back');
      expect(workerLogs).not.toContain(secret);
      expect(api.calls().some((c) => (c.body as { reply_to?: string }).reply_to === slow)).toBe(false);

      // The handed-back turn is not lost: the next worker takes the thread and answers it.
      await startWorker('worker-next');
      expect(await replyTo(api, slow, 60_000)).toContain('slow one');
    }, 180_000);
  });
}
