// An agent that runs shell commands for whoever writes in its thread, as coding agents do, turned on
// the worker that runs it: every secret the worker holds is a canary, and the agent hunts for them.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { waitFor } from '@tributary/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { type Fleet, startFleet } from '../fleet/fleet.js';
import { appendOnlyFiles, message } from '../worker-fixture.js';

let fleet: Fleet | undefined;
afterEach(async () => {
  await fleet?.close();
  fleet = undefined;
});

const CANARIES = {
  ADMIN_TOKEN: 'canary-admin-4f1d9e8a7b6c5d4e3f2a',
  METRICS_TOKEN: 'canary-metrics-9a8b7c6d5e4f3a2b1c0d',
  SLACK_SIGNING_SECRET: 'canary-slack-signing-0f1e2d3c4b5a',
  TRIBUTARY_CANARY_ENV: 'canary-worker-env-7e6d5c4b3a29',
};
const FILE_CANARY = 'canary-secret-file-1a2b3c4d5e6f';
const TMP_CANARY = 'canary-worker-tmp-6f5e4d3c2b1a';
/** A further Slack team's bot token, as SLACK_TEAM_TOKENS_DIR holds it (docs/adr/0061). */
const TEAM_TOKEN_CANARY = 'xoxb-canary-team-token-5c4b3a2d1e0f';

const A = 'gateway:C1:TA';
const B = 'gateway:C1:TB';

const shell = (command: string) => message(`@agent ${JSON.stringify({ shell: command })}`);
const lastReply = (f: Fleet, thread: string) => f.replies(thread).at(-1)!.message.text;

describe('a sandboxed agent hunting for the worker’s secrets (bubblewrap)', { timeout: 120_000 }, () => {
  it('finds none, cannot stop the worker, cannot use Redis and cannot see another thread', async () => {
    const f = await startFleet({}, {}, { private: true, appendfsync: 'always' });
    fleet = f;
    const home = await f.tempDir();
    const workspaces = await f.tempDir();
    const tmp = await f.tempDir();
    // A secret file as an operator keeps one, in the worker's home, and one in its temp folder.
    await writeFile(join(home, '.tributary-credentials'), `REDIS_PASSWORD=${FILE_CANARY}\n`);
    await writeFile(join(tmp, 'worker-secret'), TMP_CANARY);
    const teamTokens = await f.tempDir();
    await writeFile(join(teamTokens, 'T0CANARY'), TEAM_TOKEN_CANARY);
    const worker = await f.spawn({
      env: {
        ...CANARIES,
        HOME: home,
        TMPDIR: tmp,
        AGENT_SANDBOX: 'bubblewrap',
        AGENT_WORKSPACES: workspaces,
        AGENT_ENV: 'TRIBUTARY_AGENT_SCRIPTING',
        SLACK_TEAM_TOKENS_DIR: teamTokens,
      },
    });
    const { host, port, password } = f.redis.options;
    expect(worker.logs.find((l) => l.msg === 'agents run isolated')?.isolation).toMatch(/^bubblewrap /);

    await f.send(B, shell('echo thread-b-notes > notes.txt && pwd'));
    await f.waitForReplies(B, 1);
    expect(lastReply(f, B)).toContain('shell exit 0');

    const hunt = [
      'id',
      'ps ax',
      'for p in /proc/[0-9]*; do cat $p/environ; echo; cat $p/cmdline; echo; done',
      'env',
      `cat /proc/${worker.pid}/environ`,
      `kill -STOP ${worker.pid}; echo kill-status=$?`,
      `cat ${join(home, '.tributary-credentials')} ${join(tmp, 'worker-secret')}`,
      // Not only blanked from the reply: the folder is not there at all.
      `cat ${join(teamTokens, 'T0CANARY')}; echo team-tokens-status=$?`,
      'ls -a ~ /tmp',
      `ls ${workspaces}; find / -name notes.txt 2>/dev/null; echo found-end`,
      `redis-cli -h ${host} -p ${port} set pwned yes`,
      `redis-cli -h ${host} -p ${port} keys '*'`,
    ].join('; echo ---; ');
    await f.send(A, shell(`(${hunt}) 2>&1`));
    await f.waitForReplies(A, 1);
    const found = lastReply(f, A);

    // The commands ran, in the sandbox: a user of its own, only its own processes, nothing of the others.
    expect(found).toContain('uid=1000');
    expect(found).not.toContain('worker-main');
    expect(found).not.toContain('warden');
    expect(found).toMatch(/kill-status=1/);
    expect(found).toMatch(/team-tokens-status=1/);
    expect(found).toContain('NOAUTH');
    expect(found).toContain('found-end');
    expect(found).not.toContain('thread-b-notes');
    expect(found).not.toMatch(/notes\.txt\n/);
    for (const canary of [
      ...Object.values(CANARIES),
      FILE_CANARY,
      TMP_CANARY,
      TEAM_TOKEN_CANARY,
      password!,
    ]) {
      expect(found, canary).not.toContain(canary);
    }
    expect(await f.redis.exists('pwned')).toBe(0);

    // The worker runs on: its next turns are answered, and thread B's files are where B left them.
    await f.send(B, shell('cat notes.txt'));
    await f.waitForReplies(B, 2);
    expect(lastReply(f, B)).toContain('thread-b-notes');

    // Nothing the worker holds reached Redis, where every reply and history entry is written.
    await waitFor(async () => f.outboxEmpty(A), { what: 'the hunt’s reply delivered' });
    const written = await appendOnlyFiles(f);
    for (const canary of [...Object.values(CANARIES), FILE_CANARY, TMP_CANARY, TEAM_TOKEN_CANARY]) {
      expect(written, canary).not.toContain(canary);
    }
  });
});
