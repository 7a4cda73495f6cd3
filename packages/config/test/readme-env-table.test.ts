import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { FORWARDER_REQUIRED, loadForwarderConfig } from '../src/forwarder-config.js';
import { loadIngressConfig } from '../src/ingress-config.js';
import { loadWorkerConfig } from '../src/load-config.js';
import { loadPlatformConfig } from '../src/platform-config.js';
import { variablesRead } from '../src/variables-read.js';

const readme = readFileSync(new URL('../../../README.md', import.meta.url), 'utf8');

function documented(from: string, to: string): string[] {
  const section = readme.slice(readme.indexOf(from), readme.indexOf(to));
  return [...section.matchAll(/^\| `([A-Z_]+)` \|/gm)].map((m) => m[1]!).sort();
}

const platform = variablesRead(loadPlatformConfig);
const without = (all: Set<string>) => [...all].filter((name) => !platform.has(name)).sort();

/** Every variable a loader reads is documented in its README table, and nothing else is. */
describe('README environment tables', () => {
  it('lists exactly the platform variables under Platforms, then the forwarder variables', () => {
    const forwarderTable = readme.indexOf('| `FORWARD_URL` |');
    expect(documented('## Platforms', 'Discord channel messages arrive')).toEqual([...platform].sort());
    expect(documented('Discord channel messages arrive', '## Running a worker')).toEqual(
      without(variablesRead(loadForwarderConfig, FORWARDER_REQUIRED)).filter((name) => name !== 'LOG_LEVEL'),
    );
    expect(forwarderTable).toBeGreaterThan(0);
  });

  it('lists exactly the other ingress variables under Running ingress', () => {
    expect(documented('## Running ingress', '## Platforms')).toEqual(
      without(variablesRead(loadIngressConfig)),
    );
  });

  it('lists exactly the other worker variables under Running a worker', () => {
    expect(documented('## Running a worker', '## Checks you can run')).toEqual(
      without(variablesRead((env) => loadWorkerConfig(env))),
    );
  });
});
