// A real Prometheus server (Debian's `prometheus` package, which .ci/run installs) for one suite:
// scrapes the given targets every second, evaluates infra/prometheus/rules.yml every second, and
// answers PromQL over its HTTP API.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, waitFor } from '@tributary/testkit';
import { stringify } from 'yaml';

export const RULES = fileURLToPath(new URL('../../infra/prometheus/rules.yml', import.meta.url));

export interface ScrapeJob {
  job: string;
  /** host:port of each target. */
  targets: string[];
  /** Labels every series of the job gets, as a ServiceMonitor adds `namespace`. */
  labels: Record<string, string>;
  bearerToken?: string;
}

export interface PromResult {
  metric: Record<string, string>;
  value: [number, string];
}

export interface PrometheusServer {
  readonly url: string;
  /** An instant query; throws with Prometheus's error when the query fails. */
  query(expr: string): Promise<PromResult[]>;
  stop(): Promise<void>;
}

export async function startPrometheus(jobs: ScrapeJob[]): Promise<PrometheusServer> {
  const dir = await mkdtemp(join(tmpdir(), 'tributary-prometheus-'));
  const port = await freePort();
  const config = {
    global: { scrape_interval: '1s', scrape_timeout: '900ms', evaluation_interval: '1s' },
    rule_files: [RULES],
    scrape_configs: jobs.map(({ job, targets, labels, bearerToken }) => ({
      job_name: job,
      static_configs: [{ targets, labels }],
      ...(bearerToken ? { authorization: { type: 'Bearer', credentials: bearerToken } } : {}),
    })),
  };
  await writeFile(join(dir, 'prometheus.yml'), stringify(config));
  let child: ChildProcess;
  try {
    child = spawn(
      'prometheus',
      [
        `--config.file=${join(dir, 'prometheus.yml')}`,
        `--storage.tsdb.path=${join(dir, 'data')}`,
        `--web.listen-address=127.0.0.1:${port}`,
        '--log.level=warn',
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
  } catch (error) {
    throw new Error(`cannot start prometheus (apt-get install prometheus, as .ci/run does): ${error}`);
  }
  let stderr = '';
  child.stderr?.on('data', (chunk) => {
    stderr = (stderr + chunk).slice(-4_000);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const spawnError = new Promise<never>((_, reject) =>
    child.once('error', (error) =>
      reject(
        new Error(`cannot start prometheus (apt-get install prometheus, as .ci/run does): ${error.message}`),
      ),
    ),
  );
  const url = `http://127.0.0.1:${port}`;
  await Promise.race([
    spawnError,
    waitFor(
      () =>
        fetch(`${url}/-/ready`).then(
          (r) => r.ok,
          () => false,
        ),
      { what: `prometheus ready (stderr: ${stderr})`, timeoutMs: 20_000 },
    ),
  ]);
  return {
    url,
    async query(expr) {
      const response = await fetch(`${url}/api/v1/query?${new URLSearchParams({ query: expr })}`);
      const body = (await response.json()) as {
        status: string;
        error?: string;
        data?: { result: PromResult[] };
      };
      if (body.status !== 'success') throw new Error(`${expr}: ${body.error}`);
      return body.data!.result;
    },
    async stop() {
      child.kill('SIGTERM');
      await exited;
      await rm(dir, { recursive: true, force: true });
    },
  };
}
