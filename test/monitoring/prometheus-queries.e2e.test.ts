// A real Prometheus scrapes a real stack (ingress and a worker with the built-in agent, Redis, the
// fake platform API) while it answers messages, with the bearer token and the namespace label a
// ServiceMonitor gives; then every dashboard panel query and every recording and alerting rule is
// evaluated through Prometheus's HTTP API. None may fail; every panel whose series the traffic
// produced must return data; and with the targets gone, the KEDA query must answer its fallback.
import { readFileSync } from 'node:fs';
import { waitFor } from '@tributary/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { renderDashboard } from '../../infra/grafana/generate-dashboard.js';
import { postGatewayMessage, type Stack, startStack } from '../stack/stack-fixture.js';
import { type PrometheusServer, RULES, startPrometheus } from './prometheus-server.js';

const NAMESPACE = 'tributary';
const METRICS_TOKEN = 'prometheus-test-metrics-token';
const JOBS = ['tributary-ingress', 'tributary-worker'];

interface Panel {
  title: string;
  targets?: { expr: string }[];
}
const panels = (JSON.parse(renderDashboard()) as { panels: Panel[] }).panels.filter((p) => p.targets);
const rules = (parse(readFileSync(RULES, 'utf8')) as { groups: { rules: Record<string, string>[] }[] }).groups
  .flatMap((group) => group.rules)
  .map((rule) => ({ name: rule.record ?? rule.alert!, expr: rule.expr! }));
const kedaQuery = (
  parse(
    readFileSync(new URL('../../infra/k8s/overlays/production/scaling.yaml', import.meta.url), 'utf8'),
  ) as {
    spec: { triggers: { metadata: { query: string } }[] };
  }
).spec.triggers[0]!.metadata.query;

/** The dashboard's variables as Grafana fills them for this stack. */
function withVariables(expr: string): string {
  return expr
    .replaceAll('$namespace', NAMESPACE)
    .replaceAll('$job', JOBS.join('|'))
    .replaceAll('$platform', '.*')
    .replaceAll('$__rate_interval', '1m');
}

/** The series selectors an expression reads: `name{matchers}`. */
function selectors(expr: string): string[] {
  return [...expr.matchAll(/(?<![A-Za-z0-9_:])(tributary[_:][A-Za-z0-9_:]*)(\{[^}]*\})?/g)].map(
    ([, name, matchers]) => `${name}${matchers ?? ''}`,
  );
}

let stack: Stack | undefined;
let prometheus: PrometheusServer;

/** Whether every series of ours holds two samples or more: a rate over fewer answers nothing. */
async function everySeriesScrapedTwice(): Promise<boolean> {
  const names = await prometheus.query('count by (__name__) ({__name__=~"tributary_.+"})');
  for (const { metric } of names) {
    const once = await prometheus.query(`count_over_time(${metric.__name__}[1m]) < 2`);
    if (once.length > 0) return false;
  }
  return names.length > 0;
}

beforeAll(async () => {
  // The agent reports usage, as the published agents do, so the Routes row has its series.
  stack = await startStack({ METRICS_TOKEN }, undefined, { TRIBUTARY_AGENT_DEFAULTS: '{"usage": true}' });
  const hostPort = (url: string) => new URL(url).host;
  prometheus = await startPrometheus([
    {
      job: JOBS[0]!,
      // Ingress serves /metrics on its admin listener, never on the webhook port.
      targets: [hostPort(stack.ingress.adminUrl)],
      labels: { namespace: NAMESPACE },
      bearerToken: METRICS_TOKEN,
    },
    {
      job: JOBS[1]!,
      targets: [hostPort(stack.worker.healthUrl)],
      labels: { namespace: NAMESPACE },
      bearerToken: METRICS_TOKEN,
    },
  ]);
  await waitFor(async () => (await prometheus.query('up == 1')).length === 2, {
    what: 'both targets scraped with the bearer token',
    timeoutMs: 20_000,
  });
  // Traffic: three threads, two messages each, every one answered; the first delivered twice (a
  // duplicate, absorbed). The first message's turn is scraped before the rest are sent: a counter
  // whose every increase falls between two scrapes has no rate, and a fast machine answers all six
  // within one scrape interval.
  const send = async (n: number, outcome: string) => {
    const answer = await postGatewayMessage(stack!, n, `t${n % 3}`, `message ${n}`);
    expect(answer.body).toMatchObject({ outcome });
  };
  await send(1, 'accepted');
  await waitFor(
    async () =>
      (await prometheus.query('tributary_batch_size_count')).length > 0 &&
      (await prometheus.query('tributary_ingress_requests_total')).length > 0,
    { what: 'the first message and its turn scraped', timeoutMs: 30_000 },
  );
  for (const n of [2, 3, 4, 5, 6]) await send(n, 'accepted');
  await send(1, 'duplicate');
  // Every series the traffic makes, and the recording rules over them, are in Prometheus; every
  // series has been scraped twice since, which a rate over it needs to answer at all.
  // Under a full suite on two CPUs the stack and Prometheus both run slowly: the wait says which
  // condition it still lacked when it gives up.
  const conditions: [string, () => Promise<boolean>][] = [
    [
      'three replies delivered',
      async () =>
        (await prometheus.query('sum(tributary_reply_deliveries_total{outcome="delivered"}) >= 3')).length >
        0,
    ],
    ['every series scraped twice', everySeriesScrapedTwice],
    [
      'a rate of batch sizes',
      async () => (await prometheus.query('sum(rate(tributary_batch_size_count[1m])) > 0')).length > 0,
    ],
    ['the p95 batch size rule', async () => (await prometheus.query('tributary:p95_batch_size')).length > 0],
  ];
  let lacking = conditions.map(([name]) => name);
  // The panels read one-minute rates: on a slow machine the first traffic can fall out of that window
  // before every series is scraped twice, so a message is sent again whenever no rate is left.
  let more = 7;
  let lastSent = Date.now();
  await waitFor(
    async () => {
      const met = await Promise.all(conditions.map(([, check]) => check()));
      lacking = conditions.filter((_, i) => !met[i]).map(([name]) => name);
      if (lacking.includes('a rate of batch sizes') && Date.now() - lastSent > 20_000) {
        await send(more++, 'accepted');
        lastSent = Date.now();
      }
      return lacking.length === 0;
    },
    {
      what: () =>
        `replies delivered and scraped, and the recording rules evaluated (lacking: ${lacking.join(', ')})`,
      timeoutMs: 90_000,
      // Prometheus scrapes and evaluates once a second: polling it faster only loads a busy machine.
      intervalMs: 250,
    },
  );
}, 180_000);

afterAll(async () => {
  await stack?.close();
  await prometheus?.stop();
});

describe('a real Prometheus over a real stack', () => {
  it('evaluates every recording and alerting rule without an error', async () => {
    expect(rules.length).toBeGreaterThanOrEqual(12);
    for (const { name, expr } of rules) {
      await expect(prometheus.query(expr), name).resolves.toBeInstanceOf(Array);
    }
    // The recording rules record: their series are there, per namespace.
    const [p95] = await prometheus.query('tributary:p95_batch_size');
    expect(p95!.metric).toMatchObject({ namespace: NAMESPACE, platform: 'gateway' });
  });

  it('answers every dashboard panel query, with data wherever the traffic produced its series', async () => {
    const empty: string[] = [];
    const unexercised: string[] = [];
    for (const panel of panels) {
      for (const target of panel.targets!) {
        const expr = withVariables(target.expr);
        const result = await prometheus.query(expr);
        let exercised = true;
        for (const selector of selectors(expr)) {
          if ((await prometheus.query(selector)).length === 0) exercised = false;
        }
        if (!exercised) unexercised.push(`${panel.title}: ${target.expr}`);
        else if (result.length === 0) empty.push(`${panel.title}: ${expr}`);
      }
    }
    expect(empty).toEqual([]);
    // Only what this traffic does not cause has no series yet: refusals, messages for a pool without
    // workers, budget waits and turns without usage (this agent reports it), platform calls that
    // failed and attachments not fetched.
    expect(unexercised.map((line) => line.split(':')[0])).toEqual([
      'Refusals and duplicates',
      'Workers per pool',
      'Budget waits and unreported usage',
      'Budget waits and unreported usage',
      'Platform API calls not 2xx',
      'Attachments not fetched',
    ]);
  });

  it('asks KEDA for the fallback fleet once the targets are gone, and says so in an alert', async () => {
    const demand = await prometheus.query(kedaQuery);
    expect(demand).toHaveLength(1);
    const fallback = Number(/vector\((\d+)\)/.exec(kedaQuery)![1]);
    // Scraped: the real demand, which this idle stack has far below the fallback.
    expect(Number(demand[0]!.value[1])).toBeLessThan(fallback);

    await stack!.close();
    stack = undefined;
    await waitFor(async () => (await prometheus.query('up == 0')).length === 2, {
      what: 'both targets seen down',
      timeoutMs: 20_000,
    });
    const [answer] = await prometheus.query(kedaQuery);
    expect(Number(answer!.value[1])).toBe(fallback);
    const missing = rules.find((rule) => rule.name === 'TributaryScrapeTargetsMissing')!;
    const down = await prometheus.query(missing.expr);
    expect(down.map((series) => series.metric.job).sort()).toEqual(JOBS);
  });
});
