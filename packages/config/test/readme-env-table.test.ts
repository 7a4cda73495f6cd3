import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadWorkerConfig } from '../src/load-config.js';

/** Every variable the worker reads is documented in the README table, and nothing else is. */
describe('README environment table', () => {
  it('lists exactly the variables loadWorkerConfig reads', () => {
    const read = new Set<string>();
    const env = new Proxy({} as Record<string, string | undefined>, {
      get: (_, name) => {
        if (typeof name === 'string') read.add(name);
        return undefined;
      },
    });
    loadWorkerConfig(env);
    const readme = readFileSync(new URL('../../../README.md', import.meta.url), 'utf8');
    const section = readme.slice(
      readme.indexOf('## Running a worker'),
      readme.indexOf('## Checks you can run'),
    );
    const documented = [...section.matchAll(/^\| `([A-Z_]+)` \|/gm)].map((m) => m[1]);
    expect(documented.sort()).toEqual([...read].sort());
  });
});
