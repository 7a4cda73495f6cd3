import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { exportedSeries, referencedNames, unknownNames } from './series-names.js';

const infra = (path: string) => readFileSync(new URL(`../../../infra/${path}`, import.meta.url), 'utf8');

interface Panel {
  type: string;
  title?: string;
  datasource?: { uid?: string };
  targets?: { expr: string; legendFormat?: string }[];
  fieldConfig?: { defaults: { unit?: string; custom?: { axisLabel?: string } } };
  options?: { legend?: { showLegend?: boolean } };
  panels?: Panel[];
}
interface Variable {
  type: string;
  name: string;
  query: string | { query: string };
}
interface Dashboard {
  uid: string;
  panels: Panel[];
  templating: { list: Variable[] };
}
interface RuleFile {
  groups: { rules: ({ record: string; expr: string } | { alert: string; expr: string })[] }[];
}
interface RuleTests {
  tests: { input_series?: { series: string }[] }[];
}

const dashboard = JSON.parse(infra('grafana/dashboards/tributary.json')) as Dashboard;
const rules = (parse(infra('prometheus/rules.yml')) as RuleFile).groups.flatMap((group) => group.rules);
const ruleTests = parse(infra('prometheus/rules.test.yml')) as RuleTests;

// Rows nest their panels when collapsed; every level counts.
function allPanels(panels: Panel[]): Panel[] {
  return panels.flatMap((panel) => [panel, ...allPanels(panel.panels ?? [])]);
}
const panels = allPanels(dashboard.panels);
const panelExprs = panels.flatMap((panel) => (panel.targets ?? []).map((target) => target.expr));
const recordingRules = rules.flatMap((rule) => ('record' in rule ? [rule.record] : []));

let known: Set<string>;
beforeAll(async () => {
  known = new Set([...(await exportedSeries()), ...recordingRules]);
});

describe('series names in the dashboard and the rules', () => {
  it.each(panelExprs)('dashboard query %s reads only exported series', (expr) => {
    expect(referencedNames(expr)).not.toEqual([]);
    expect(unknownNames(expr, known)).toEqual([]);
  });

  it.each(rules.map((rule) => ['record' in rule ? rule.record : rule.alert, rule.expr]))(
    'rule %s reads only exported series',
    (_name, expr) => {
      // Only the scrape-health rule reads nothing of ours: Prometheus's own `up`.
      if (!/\bup\{/.test(expr)) expect(referencedNames(expr)).not.toEqual([]);
      expect(unknownNames(expr, known)).toEqual([]);
    },
  );

  it('feeds the rule tests only series the code exports', () => {
    const series = ruleTests.tests.flatMap((test) => (test.input_series ?? []).map((input) => input.series));
    expect(series.length).toBeGreaterThan(0);
    for (const selector of series) expect(unknownNames(selector.split('{')[0]!, known)).toEqual([]);
  });

  it('rejects an invented name, and a histogram suffix on a counter', () => {
    const invented = 'sum(rate(tributary_invented_total[5m])) / sum(rate(tributary_turns_total_bucket[5m]))';
    expect(unknownNames(invented, known)).toEqual([
      'tributary_invented_total',
      'tributary_turns_total_bucket',
    ]);
    expect(unknownNames('tributary:p95_batch_size_typo > 1', known)).toEqual([
      'tributary:p95_batch_size_typo',
    ]);
  });

  it('reads names from the query, not from label values', () => {
    expect(
      referencedNames('tributary_batch_size_bucket{job="tributary_other", le!~\'tributary_x\'}'),
    ).toEqual(['tributary_batch_size_bucket']);
  });
});

describe('the dashboard', () => {
  const queried = panels.filter((panel) => panel.targets);
  const variable = (name: string) => dashboard.templating.list.find((v) => v.name === name);

  it('is provisioned under uid tributary, each panel on the datasource variable', () => {
    expect(dashboard.uid).toBe('tributary');
    expect(variable('datasource')).toMatchObject({ type: 'datasource', query: 'prometheus' });
    for (const panel of queried) expect(panel.datasource?.uid, panel.title).toBe(`\${datasource}`);
    // docker-compose's Grafana provisions the Prometheus the variable finds.
    const datasources = infra('grafana/provisioning/datasources/prometheus.yml');
    expect(parse(datasources).datasources[0]).toMatchObject({
      type: 'prometheus',
      url: 'http://prometheus:9090',
    });
  });

  it('scopes every query by the namespace variable and every raw series by the job variable', () => {
    for (const name of ['namespace', 'job', 'platform']) {
      const query = variable(name)!.query as { query: string };
      expect(unknownNames(query.query, known), name).toEqual([]);
    }
    expect(panelExprs.length).toBeGreaterThan(30);
    for (const expr of panelExprs) {
      const selectors = [...expr.matchAll(/tributary[_:][A-Za-z0-9_:]*(\{[^}]*\})?/g)];
      for (const [selector, matchers] of selectors) {
        expect(matchers, expr).toContain('namespace=~"$namespace"');
        // Recording rules aggregate over jobs: their series have no job label to match.
        if (!selector.includes(':')) expect(matchers, expr).toContain('job=~"$job"');
      }
    }
    expect(panelExprs.filter((expr) => expr.includes('platform=~"$platform"')).length).toBeGreaterThan(5);
  });

  it('gives every panel a unit, an axis title and a legend, and every query a legend format', () => {
    for (const panel of queried) {
      expect(panel.fieldConfig?.defaults.unit, panel.title).toBeTruthy();
      expect(panel.fieldConfig?.defaults.custom?.axisLabel, panel.title).toBeTruthy();
      expect(panel.options?.legend?.showLegend, panel.title).toBe(true);
      for (const target of panel.targets!) expect(target.legendFormat, panel.title).toBeTruthy();
    }
  });

  it('shows the mission metrics, replies, Redis, agents and the processes themselves', () => {
    const read = new Set(panelExprs.flatMap(referencedNames));
    for (const name of [
      'tributary_context_tokens_per_event_bucket',
      'tributary:p95_batch_size',
      'tributary_packed_block_count_bucket',
      'tributary_reply_deliveries_total',
      'tributary_ingress_redis_down',
      'tributary_agent_start_failures_total',
      'tributary_process_cpu_seconds_total',
      'tributary_process_resident_memory_bytes',
      'tributary_nodejs_eventloop_lag_p99_seconds',
    ]) {
      expect(read, name).toContain(name);
    }
    expect(panelExprs.some((expr) => expr.includes('outcome="dead"'))).toBe(true);
  });
});
