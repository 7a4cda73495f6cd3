// docker-compose.yml as written, under podman-compose: Redis and Prometheus (stand-in images),
// ingress, two workers and the agents' container come up, report ready through the file's own health
// checks, Prometheus finds and scrapes all three Tributary processes, one signed message is answered end
// to end, an agent that hunts for the workers' secrets and another thread's files from its sandbox in
// the agents' container finds none, and the stack comes down. Grafana is left out: it has no stand-in (no Debian package).
import { randomBytes } from 'node:crypto';
import { copyFile, cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { waitFor } from '@tributary/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postGatewayMessage } from './gateway-message.js';
import { buildImage, podman, podmanEnv, podmanProblem, preparePodman, root, streamLines } from './podman.js';

const problem = podmanProblem('podman-compose');
/** The ports docker-compose.yml publishes ingress and Prometheus on. */
const INGRESS = 'http://127.0.0.1:8080';
const PROMETHEUS = 'http://127.0.0.1:9090';
/** What the test adds to the file as an operator would: the built-in agent scriptable, a canary. */
const OVERRIDE = 'docker-compose.scripted.yml';

if (problem) {
  it('brings the compose stack up under podman-compose', () => {
    throw new Error(`the compose stack cannot be started on this machine: ${problem}`);
  });
} else {
  describe('docker-compose.yml under podman-compose', () => {
    const project = `tributary-smoke-${randomBytes(3).toString('hex')}`;
    const secret = randomBytes(16).toString('hex');
    // Every secret a worker holds is a canary: the two .env gives it, one variable no scrubber knows,
    // and a file in its HOME.
    const canaries = {
      gateway: secret,
      redis: `canary${randomBytes(12).toString('hex')}`,
      env: `canary-worker-env-${randomBytes(8).toString('hex')}`,
      file: `canary-worker-file-${randomBytes(8).toString('hex')}`,
    };
    let dir: string;
    let up = false;

    /** `podman-compose -p <project> …` in the folder holding the copied compose file and its .env. */
    const compose = (...args: string[]) =>
      streamLines('podman-compose', ['-p', project, '-f', 'docker-compose.yml', '-f', OVERRIDE, ...args], {
        cwd: dir,
        env: podmanEnv(),
        // Only the step and its container: a `podman run` line carries the .env values.
        show: (line) => {
          const step = line.match(/^podman (run|stop|rm|start)\b/)?.[1];
          return step && `${step} ${line.match(/--name=(\S+)/)?.[1] ?? line.split(' ').at(-1)}`;
        },
        label: `compose ${args[0]}`,
      });
    const container = (service: string, replica: number) => `${project}_${service}_${replica}`;

    beforeAll(async () => {
      await preparePodman();
      await buildImage();
      for (const url of [INGRESS, PROMETHEUS]) {
        const taken = await fetch(url).then(
          () => true,
          () => false,
        );
        if (taken)
          throw new Error(`something already listens on ${url}, a port docker-compose.yml publishes`);
      }
      // The file as it is, beside an .env made as the README says (cp .env.example .env, then fill in).
      dir = await mkdtemp(join(tmpdir(), 'tributary-compose-'));
      await copyFile(join(root, 'docker-compose.yml'), join(dir, 'docker-compose.yml'));
      await cp(join(root, 'infra/prometheus'), join(dir, 'infra/prometheus'), { recursive: true });
      const example = await readFile(join(root, '.env.example'), 'utf8');
      const filled = example
        .replace(/^GATEWAY_SECRET=$/m, `GATEWAY_SECRET=${secret}`)
        .replace(/^REDIS_PASSWORD=$/m, `REDIS_PASSWORD=${canaries.redis}`)
        .replace(/^LOG_LEVEL=.*$/m, 'LOG_LEVEL=debug');
      expect(filled).toContain(`GATEWAY_SECRET=${secret}`);
      await writeFile(join(dir, '.env'), filled);
      // As an operator scripts the built-in agent (apps/agent/README.md): the switch reaches the agent
      // only because AGENT_ENV names it; the canary variable is the worker's alone.
      await writeFile(
        join(dir, OVERRIDE),
        [
          'services:',
          '  worker:',
          '    environment:',
          '      AGENT_ENV: TRIBUTARY_AGENT_SCRIPTING',
          "      TRIBUTARY_AGENT_SCRIPTING: 'on'",
          `      TRIBUTARY_CANARY_ENV: ${canaries.env}`,
          '',
        ].join('\n'),
      );
      up = true;
      await compose('up', '-d', 'redis', 'agents', 'ingress', 'worker', 'prometheus');
      const [network] = JSON.parse(await podman('network', 'inspect', `${project}_default`)) as {
        dns_enabled: boolean;
      }[];
      if (!network?.dns_enabled) {
        throw new Error(
          'the compose network has no DNS, so services cannot find redis by name ' +
            '(podman with CNI: apt-get install golang-github-containernetworking-plugin-dnsname)',
        );
      }
    }, 900_000);

    afterAll(async () => {
      if (up) await compose('down', '-v').catch((error) => console.warn(String(error)));
      if (dir) await rm(dir, { recursive: true, force: true });
    }, 120_000);

    it('starts Redis, the agents’ container, ingress and two workers, each ready by its health check', async () => {
      for (const name of [
        container('redis', 1),
        container('agents', 1),
        container('ingress', 1),
        container('worker', 1),
        container('worker', 2),
      ]) {
        await waitFor(
          () =>
            podman('healthcheck', 'run', name).then(
              () => true,
              () => false,
            ),
          { what: `${name} healthy`, timeoutMs: 90_000, intervalMs: 1000 },
        );
      }
      expect((await fetch(`${INGRESS}/readyz`)).status).toBe(200);
      // Each worker runs its agents through the agent host, having asked it what isolation they get.
      for (const worker of [container('worker', 1), container('worker', 2)]) {
        const line = (await podman('logs', worker))
          .split('\n')
          .find((l) => l.includes('"msg":"agents run isolated"'));
        expect(line, worker).toBeDefined();
        expect(JSON.parse(line!).isolation, worker).toMatch(
          /^agent host at \/run\/tributary\/agent-host\.sock/,
        );
      }
    });

    it('is scraped by Prometheus: ingress and both workers found through DNS and up', async () => {
      const up = async () => {
        const response = await fetch(`${PROMETHEUS}/api/v1/targets`).catch(() => undefined);
        if (!response?.ok) return undefined;
        const { data } = (await response.json()) as {
          data: { activeTargets: { labels: { job: string }; health: string }[] };
        };
        const healthy = (job: string) =>
          data.activeTargets.filter((t) => t.labels.job === job && t.health === 'up').length;
        const counts = { ingress: healthy('tributary-ingress'), workers: healthy('tributary-worker') };
        return counts.ingress === 1 && counts.workers === 2 ? counts : undefined;
      };
      // The scrape interval is 15 s: the first scrape of each target may take that long.
      const scraped = await waitFor(up, {
        what: 'Prometheus to scrape 1 ingress and 2 workers',
        timeoutMs: 90_000,
        intervalMs: 1000,
      });
      expect(scraped).toEqual({ ingress: 1, workers: 2 });
    });

    const workers = () => [container('worker', 1), container('worker', 2)];
    /** The text of every message a worker sent to `thread`, once there are `count` of them. */
    const replies = (thread: string, count: number) =>
      waitFor(
        async () => {
          const texts: string[] = [];
          // No reply URL in .env: a worker's reply goes to its log (text at debug level).
          for (const worker of workers()) {
            for (const line of (await podman('logs', worker)).split('\n')) {
              if (line.includes('"msg":"outbound message"') && line.includes(thread))
                texts.push((JSON.parse(line) as { text: string }).text);
            }
          }
          return texts.length >= count ? texts : undefined;
        },
        { what: `${count} replies in ${thread}`, timeoutMs: 60_000, intervalMs: 500 },
      );

    it('answers a signed message end to end', async () => {
      const thread = `smoke-${randomBytes(3).toString('hex')}`;
      await postGatewayMessage(INGRESS, secret, thread, 'hello through compose');
      const [reply] = await replies(thread, 1);
      expect(reply).toContain('hello through compose');
    });

    it('runs agents where none of the workers’ secrets can be found, and the workers run on', async () => {
      for (const worker of workers()) {
        await podman(
          'exec',
          worker,
          'sh',
          '-c',
          `echo 'REDIS_PASSWORD=${canaries.file}' > ~/.tributary-credentials`,
        );
      }
      // Another thread's agent leaves a file in its workspace, where the hunt goes looking for it.
      const neighbour = `neighbour-${randomBytes(3).toString('hex')}`;
      const neighbourCanary = `canary-neighbour-${randomBytes(8).toString('hex')}`;
      await postGatewayMessage(
        INGRESS,
        secret,
        neighbour,
        `@agent ${JSON.stringify({ shell: `echo ${neighbourCanary} > notes.txt` })}`,
      );
      expect((await replies(neighbour, 1))[0]).toContain('shell exit 0');
      const thread = `hunt-${randomBytes(3).toString('hex')}`;
      const hunt = [
        'id',
        'for p in /proc/[0-9]*; do echo "== $p"; cat $p/cmdline; echo; cat $p/environ; echo; done',
        'env',
        'ls -la /run/tributary',
        'ls -a ~ /tmp /workspaces',
        'cat /home/node/.tributary-credentials',
        `cat /workspaces/*/*/${neighbour}/workspace/notes.txt`,
        'find / -xdev -name notes.txt 2>/dev/null',
        'echo hunt-end',
      ].join('; ');
      // Compressed and encoded in the agent, so the worker's scrubber, which blanks the secrets it
      // knows in an agent's output, cannot hide a leak from this test.
      await postGatewayMessage(
        INGRESS,
        secret,
        thread,
        `@agent ${JSON.stringify({ shell: `(${hunt}) 2>&1 | tr '\\0' '\\n' | gzip -9 | base64 -w0` })}`,
      );
      const [reply] = await replies(thread, 1);
      expect(reply).toContain('shell exit 0');
      const encoded = reply!.match(/[A-Za-z0-9+/=]{40,}/)?.[0];
      expect(encoded, reply).toBeDefined();
      const found = gunzipSync(Buffer.from(encoded!, 'base64')).toString('utf8');
      // The commands ran in a sandbox of their own in the agents' container: neither the agent host
      // nor any worker is in sight, nor the other thread's room.
      expect(found).toContain('hunt-end');
      expect(found).toContain('uid=1000');
      expect(found).not.toContain('agent-host');
      expect(found).not.toMatch(/tributary(\.js)?\0?\s*worker/);
      expect(found).toMatch(/\/workspaces.*No such file or directory/);
      expect(found).not.toContain(neighbourCanary);
      expect(reply).not.toContain(neighbourCanary);
      for (const [name, canary] of Object.entries(canaries)) {
        expect(found, name).not.toContain(canary);
        expect(reply, name).not.toContain(canary);
      }
      expect(reply).not.toContain('[redacted]');

      // Both workers run on, and the next turn is answered.
      for (const worker of workers()) {
        expect((await podman('inspect', '--format', '{{.State.Running}}', worker)).trim(), worker).toBe(
          'true',
        );
      }
      await postGatewayMessage(INGRESS, secret, thread, 'still there?');
      const [, next] = await replies(thread, 2);
      expect(next).toContain('still there?');
    });

    it('stops every container with exit 0, the agents’ last', async () => {
      const names = [container('ingress', 1), container('worker', 1), container('worker', 2)];
      // Workers first: a stopping worker hands its running turns back while its agents still run.
      await podman('stop', '--time', '45', ...names);
      await podman('stop', '--time', '10', container('agents', 1));
      for (const name of [...names, container('agents', 1)]) {
        expect(Number((await podman('inspect', '--format', '{{.State.ExitCode}}', name)).trim()), name).toBe(
          0,
        );
      }
    });
  });
}
