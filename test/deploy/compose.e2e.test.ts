// docker-compose.yml as written, under podman-compose: Redis and Prometheus (stand-in images),
// ingress and two workers come up, report ready through the file's own health checks, Prometheus finds
// and scrapes all three Tributary processes, one signed message is answered end to end, and the stack
// comes down. Grafana is left out: it has no stand-in (no Debian package).
import { randomBytes } from 'node:crypto';
import { copyFile, cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitFor } from '@tributary/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postGatewayMessage } from './gateway-message.js';
import { buildImage, podman, podmanEnv, podmanProblem, preparePodman, root, streamLines } from './podman.js';

const problem = podmanProblem('podman-compose');
/** The ports docker-compose.yml publishes ingress and Prometheus on. */
const INGRESS = 'http://127.0.0.1:8080';
const PROMETHEUS = 'http://127.0.0.1:9090';

if (problem) {
  it('brings the compose stack up under podman-compose', () => {
    throw new Error(`the compose stack cannot be started on this machine: ${problem}`);
  });
} else {
  describe('docker-compose.yml under podman-compose', () => {
    const project = `tributary-smoke-${randomBytes(3).toString('hex')}`;
    const secret = randomBytes(16).toString('hex');
    let dir: string;
    let up = false;

    /** `podman-compose -p <project> …` in the folder holding the copied compose file and its .env. */
    const compose = (...args: string[]) =>
      streamLines('podman-compose', ['-p', project, ...args], {
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
        .replace(/^REDIS_PASSWORD=$/m, `REDIS_PASSWORD=${randomBytes(12).toString('hex')}`)
        .replace(/^LOG_LEVEL=.*$/m, 'LOG_LEVEL=debug');
      expect(filled).toContain(`GATEWAY_SECRET=${secret}`);
      await writeFile(join(dir, '.env'), filled);
      up = true;
      await compose('up', '-d', 'redis', 'ingress', 'worker', 'prometheus');
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

    it('starts Redis, ingress and two workers, each ready by its health check', async () => {
      for (const name of [
        container('redis', 1),
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

    it('answers a signed message end to end', async () => {
      const thread = `smoke-${randomBytes(3).toString('hex')}`;
      await postGatewayMessage(INGRESS, secret, thread, 'hello through compose');
      // No reply URL in .env: a worker's reply goes to its log (text at debug level).
      const workers = [container('worker', 1), container('worker', 2)];
      const replied = async () => {
        for (const worker of workers) {
          const lines = (await podman('logs', worker)).split('\n');
          const line = lines.find((l) => l.includes('"msg":"outbound message"') && l.includes(thread));
          if (line) return JSON.parse(line) as { text: string };
        }
        return undefined;
      };
      const reply = await waitFor(replied, { what: 'a worker to reply', timeoutMs: 60_000, intervalMs: 500 });
      expect(reply.text).toContain('hello through compose');
    });

    it('stops every container with exit 0', async () => {
      const names = [container('ingress', 1), container('worker', 1), container('worker', 2)];
      await podman('stop', '--time', '45', ...names);
      for (const name of names) {
        expect(Number((await podman('inspect', '--format', '{{.State.ExitCode}}', name)).trim()), name).toBe(
          0,
        );
      }
    });
  });
}
