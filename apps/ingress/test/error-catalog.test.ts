import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ERROR_CATALOG } from '../src/errors.js';

describe('the error catalogue', () => {
  it('is documented in the README exactly as the code has it', () => {
    const readme = readFileSync(new URL('../../../README.md', import.meta.url), 'utf8');
    const documented = [...readme.matchAll(/^\| `([a-z_]+)` \| (\d{3}) \| (.+) \|$/gm)].map(
      ([, code, status, hint]) => [code, Number(status), hint],
    );
    expect(documented).toEqual(
      Object.entries(ERROR_CATALOG).map(([code, { status, hint }]) => [code, status, hint]),
    );
  });
});
