import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../src/config-error.js';
import { readHeldSecrets } from '../src/held-secrets.js';
import { loadPlatformConfig } from '../src/platform-config.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A folder laid out as Kubernetes mounts a Secret: the keys as links into a hidden, dated folder. */
function mountedSecret(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'team-tokens-'));
  dirs.push(dir);
  const data = join(dir, '..2026_12_03_10_00_00.000000001');
  mkdirSync(data);
  symlinkSync(data, join(dir, '..data'));
  for (const [name, content] of Object.entries(files)) {
    writeFileSync(join(data, name), content);
    symlinkSync(join('..data', name), join(dir, name));
  }
  return dir;
}

const load = (dir: string) =>
  loadPlatformConfig({ SLACK_SIGNING_SECRET: 'secret', SLACK_TEAM_TOKENS_DIR: dir });

describe('SLACK_TEAM_TOKENS_DIR', () => {
  it("reads one token per team from a mounted Secret, skipping the volume's own entries", () => {
    const dir = mountedSecret({ T0SECOND: 'xoxb-second\n', T0THIRD: 'xoxb-third' });
    expect(load(dir).slack?.teamTokens).toEqual(
      new Map([
        ['T0SECOND', 'xoxb-second'],
        ['T0THIRD', 'xoxb-third'],
      ]),
    );
  });

  it('counts the team tokens among the secrets a worker blanks from what its agents say', () => {
    const platforms = load(mountedSecret({ T0SECOND: 'xoxb-second-team-token' }));
    expect(
      readHeldSecrets({}, { redisUrl: 'redis://127.0.0.1:6379', platforms, metricsToken: undefined }),
    ).toContain('xoxb-second-team-token');
  });

  it.each([
    ['a file not named by a team', { 'second-team': 'xoxb-x' }, /second-team is not a Slack team id/],
    // Events name the workspace (T…), never the org an org-wide install belongs to.
    ['an Enterprise Grid org', { E0ORG: 'xoxb-org' }, /E0ORG is not a Slack team id/],
    ['a file without a token', { T0SECOND: '\n' }, /T0SECOND must hold that team's bot token/],
    ['a folder without any team', {}, /holds no team's token/],
  ])('stops the start on %s, naming it', (_label, files, problem) => {
    const dir = mountedSecret(files);
    expect(() => load(dir)).toThrow(ConfigError);
    expect(() => load(dir)).toThrow(problem);
  });

  it('stops the start on a link to nothing, naming it', () => {
    const dir = mountedSecret({ T0SECOND: 'xoxb-second' });
    symlinkSync(join(dir, 'gone'), join(dir, 'T0GONE'));
    expect(() => load(dir)).toThrow(/SLACK_TEAM_TOKENS_DIR: cannot read T0GONE/);
  });

  it('stops the start on a folder that cannot be read', () => {
    expect(() => load('/nonexistent/team-tokens')).toThrow(/SLACK_TEAM_TOKENS_DIR: cannot read the folder/);
  });
});
