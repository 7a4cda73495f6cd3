import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { exportedSeries, referencedNames, unknownNames } from './series-names.js';

const infra = (path: string) => readFileSync(new URL(`../../../infra/${path}`, import.meta.url), 'utf8');

interface Panel {
  title?: string;
  datasource?: { uid?: string };
  targets?: { expr: string }[];
  panels?: Panel[];
}
interface Dashboard {
  uid: string;
  panels: Panel[];
  templating: { list: { name: string; query: { query: string } }[] };
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
      expect(referencedNames(expr)).not.toEqual([]);
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
  it('is provisioned under uid tributary, against the Prometheus datasource', () => {
    expect(dashboard.uid).toBe('tributary');
    for (const panel of panels.filter((candidate) => candidate.targets)) {
      expect(panel.datasource?.uid, panel.title).toBe('prometheus');
    }
    const datasources = infra('grafana/provisioning/datasources/prometheus.yml');
    expect(parse(datasources).datasources[0]).toMatchObject({
      uid: 'prometheus',
      url: 'http://prometheus:9090',
    });
  });

  it('filters by a platform variable', () => {
    const platform = dashboard.templating.list.find((variable) => variable.name === 'platform');
    expect(unknownNames(platform!.query.query, known)).toEqual([]);
    expect(panelExprs.filter((expr) => expr.includes('platform=~"$platform"')).length).toBeGreaterThan(5);
  });

  it('shows the three mission metrics', () => {
    const read = new Set(panelExprs.flatMap(referencedNames));
    expect(read).toContain('tributary_context_tokens_per_event_bucket');
    expect(read).toContain('tributary:p95_batch_size');
    expect(read).toContain('tributary_packed_block_count_bucket');
  });
});
