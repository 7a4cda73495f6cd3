// Writes infra/grafana/dashboards/tributary.json from infra/grafana/dashboard/tributary.ts:
//   npx tsx infra/grafana/generate-dashboard.ts
// test/infra/grafana-dashboard.test.ts fails when the committed file is not its current output.
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { tributaryDashboard } from './dashboard/tributary.js';

export const DASHBOARD_PATH = fileURLToPath(new URL('dashboards/tributary.json', import.meta.url));

/** The provisioned JSON, as committed. */
export function renderDashboard(): string {
  return `${JSON.stringify(tributaryDashboard().build(), null, 2)}\n`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(DASHBOARD_PATH, renderDashboard());
  process.stdout.write(`wrote ${DASHBOARD_PATH}\n`);
}
