// A worker image with a real coding agent (docs/agents.md, "A worker image with a real agent"): built
// from infra/docker/Dockerfile with claude-agent-acp named in AGENT_NPM_PACKAGES, run as the manifests
// run it (read-only root, uid 1000, no capabilities, HOME on a volume), and checked with
// `tributary doctor`: without the network up to session/new, then one whole prompt against a fake
// Anthropic API on this machine, with the key reaching the model only through AGENT_ENV.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeModelServer, startFakeModelServer } from '../agents/fake-model-server.js';
import { buildImage, podman, podmanProblem, preparePodman } from './podman.js';

/** The agent docs/agents.md builds into the example image; the lightest of the three (about 95 MB). */
const AGENT_PACKAGE = '@zed-industries/claude-agent-acp@0.23.1';
const AGENT_IMAGE = 'tributary:claude-agent';

const problem = podmanProblem();

if (problem) {
  it('builds and checks a worker image with a real agent under podman', () => {
    throw new Error(`the image cannot be tested on this machine: ${problem}`);
  });
} else {
  describe('a worker image with claude-agent-acp (podman)', () => {
    const key = `sk-ant-test-${randomBytes(8).toString('hex')}`;
    let model: FakeModelServer;

    /** `tributary doctor` in a container of the agent image, hardened as a worker pod; its output. */
    async function doctor(network: 'none' | 'host', env: Record<string, string>, ...args: string[]) {
      const flags = Object.entries({
        AGENT_COMMAND: 'claude-agent-acp',
        HOME: '/home/node',
        AGENT_WORKSPACES: '/home/node/work',
        AGENT_SANDBOX: 'off',
        ANTHROPIC_API_KEY: key,
        ...env,
      }).flatMap(([name, value]) => ['--env', `${name}=${value}`]);
      // An anonymous volume is writable by the image's user, as compose's and the pods' HOME are.
      return podman(
        'run',
        '--rm',
        '--network',
        network,
        '--read-only',
        '--tmpfs',
        '/tmp',
        '--volume',
        '/home/node',
        '--cap-drop',
        'ALL',
        '--security-opt',
        'no-new-privileges',
        ...flags,
        AGENT_IMAGE,
        'doctor',
        ...args,
      ).catch((error: Error & { stdout?: string }) => {
        throw new Error(`doctor failed: ${error.stdout ?? ''}\n${error.message}`);
      });
    }

    beforeAll(async () => {
      await preparePodman();
      await buildImage({ tag: AGENT_IMAGE, buildArgs: { AGENT_NPM_PACKAGES: AGENT_PACKAGE } });
      model = await startFakeModelServer();
    }, 900_000);

    afterAll(async () => {
      await model?.close();
    });

    it('holds the agent on PATH, read-only to the node user', async () => {
      const output = await podman(
        'run',
        '--rm',
        '--read-only',
        '--entrypoint',
        'sh',
        AGENT_IMAGE,
        '-c',
        'id -u; command -v claude-agent-acp; touch "$(dirname "$(command -v claude-agent-acp)")/x" 2>/dev/null || echo read-only',
      );
      expect(output.split('\n')).toEqual(['1000', '/opt/agents/bin/claude-agent-acp', 'read-only', '']);
    });

    it('passes `tributary doctor` without a network: initialize and session/new', async () => {
      const output = await doctor('none', { AGENT_ENV: 'ANTHROPIC_API_KEY' });
      expect(output).toContain('agent @zed-industries/claude-agent-acp 0.23.1');
      expect(output).toMatch(/✓ session\/new in \/home\/node\/work\/\.doctor\/workspace: session \S+/);
      expect(output).toContain('Result: a worker can use this agent.');
      expect(output).not.toContain(key);
    });

    it('answers a prompt through the fake model API, with the key handed over by AGENT_ENV alone', async () => {
      const output = await doctor(
        'host',
        { AGENT_ENV: 'ANTHROPIC_API_KEY,ANTHROPIC_BASE_URL', ANTHROPIC_BASE_URL: model.url },
        '--prompt',
        'say hi',
        '--timeout-ms',
        '120000',
      );
      expect(output).toContain('✓ prompt: stop reason end_turn');
      expect(output).toContain('| Hello from the fake model.');
      expect(output).toContain('Result: a worker can use this agent.');
      const turns = model.requests.filter((r) => r.api === 'anthropic' && r.streamed);
      expect(turns.length).toBeGreaterThan(0);
      expect(turns.every((r) => r.credential === key)).toBe(true);
      expect(turns.at(-1)!.userTexts.join('\n')).toContain('say hi');
    });
  });
}
