// The provisioned dashboard is generated from infra/grafana/dashboard (typed Grafana Foundation SDK
// builders); the committed JSON must be that code's current output.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DASHBOARD_PATH, renderDashboard } from '../../infra/grafana/generate-dashboard.js';

describe('infra/grafana/dashboards/tributary.json', () => {
  it('is the current output of generate-dashboard.ts (run it after editing infra/grafana/dashboard)', () => {
    expect(readFileSync(DASHBOARD_PATH, 'utf8')).toBe(renderDashboard());
  });
});
