import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from './support/cli-process.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tributary-routes-cli-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

async function routes(...args: string[]) {
  const run = runCli(['routes', ...args]);
  const code = await run.exited();
  return { code, stdout: run.stdout(), stderr: run.stderr() };
}

async function file(name: string, text: string): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, text);
  return path;
}

describe('tributary routes check', () => {
  it('lists the routes of a usable file, and which route a channel takes', async () => {
    const path = await file(
      'good.yaml',
      [
        'profiles:',
        '  careful: {permissionPolicy: ask}',
        'routes:',
        '  - {name: infra, platform: slack, workspace: T1, channel: C0INFRA*, profile: careful}',
        '',
      ].join('\n'),
    );
    const listed = await routes('check', path);
    expect(listed).toMatchObject({ code: 0, stdout: `${path}: 1 route: infra\n` });
    const placed = await routes(
      'check',
      path,
      '--platform',
      'slack',
      '--workspace',
      'T1',
      '--channel',
      'C0INFRA2',
    );
    expect(placed.code).toBe(0);
    expect(placed.stdout).toContain('slack T1 C0INFRA2 → infra\n');
    expect(placed.stdout).toContain('"permissionPolicy": "ask"');
    const elsewhere = await routes('check', path, '--platform', 'telegram', '--channel=-1001');
    expect(elsewhere.stdout).toContain('telegram -1001 → default\n{}');
  });

  it('names the line of the first problem and exits 1', async () => {
    const path = await file(
      'bad.yaml',
      'profiles: {}\nroutes:\n  - {name: a, platform: slack, profile: nope}\n',
    );
    const run = await routes('check', path);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(
      new RegExp(`^tributary routes: ${path.replaceAll('.', '\\.')}:3:\\d+: no profile "nope"`),
    );
  });

  it('refuses a call without a file, exit 2', async () => {
    const run = await routes('check');
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('check needs the route file');
  });
});
