import { describe, expect, it } from 'vitest';
import { ConfigError } from '../src/config-error.js';
import { splitCommandLine } from '../src/env-readers.js';
import { loadWorkerConfig } from '../src/load-config.js';

describe('worker configuration', () => {
  it('has defaults for everything and freezes the result', () => {
    const config = loadWorkerConfig({}, '/srv/agent');
    expect(config).toMatchObject({
      redisUrl: 'redis://127.0.0.1:6379',
      agentCommand: undefined,
      agentWorkspaces: '/srv/agent/.tributary/workspaces',
      agentSandbox: 'bubblewrap',
      agentSandboxRead: [],
      maxBatchMessages: 10,
      maxBatchTokens: 24_000,
      processingMode: 'per-thread',
      turnTimeoutMs: 600_000,
      stallSoftMs: 10_000,
      stallHardMs: 30_000,
      permissionPolicy: 'allow-once',
      permissionRules: {},
      leaseMs: 30_000,
      threadIdleTtlMs: 7 * 24 * 60 * 60 * 1000,
      workingReactionDelayMs: 1_000,
    });
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('bounds a reply to REPLY_MAX_PARTS messages, 10 unless told', () => {
    expect(loadWorkerConfig({}).replyMaxParts).toBe(10);
    expect(loadWorkerConfig({ REPLY_MAX_PARTS: '3' }).replyMaxParts).toBe(3);
    expect(() => loadWorkerConfig({ REPLY_MAX_PARTS: '0' })).toThrow(/REPLY_MAX_PARTS/);
  });

  it("holds every credential value of its environment, ingress's included, to blank them from agent output", () => {
    const config = loadWorkerConfig({
      REDIS_URL: 'redis://default:p%40ss-w0rd-1234@redis:6379',
      SLACK_SIGNING_SECRET: 'slack-signing',
      SLACK_BOT_TOKEN: 'slack-bot',
      TELEGRAM_SECRET_TOKEN: 'telegram-verify',
      TELEGRAM_BOT_TOKEN: 'telegram-bot',
      DISCORD_FORWARDER_SECRET: 'forwarder',
      DISCORD_BOT_TOKEN: 'discord-bot',
      GATEWAY_SECRET: 'gateway',
      METRICS_TOKEN: 'metrics-0123456789',
      ADMIN_TOKEN: 'admin-0123456789ab',
      ADMIN_TOKENS: 'ops:act:ops-0123456789abcd,grafana:read:grafana-0123456789',
      SLACK_API_URL: 'http://127.0.0.1:9/slack',
    });
    expect([...config.heldSecrets].sort()).toEqual(
      [
        'p%40ss-w0rd-1234',
        'p@ss-w0rd-1234',
        'slack-signing',
        'slack-bot',
        'telegram-verify',
        'telegram-bot',
        'forwarder',
        'discord-bot',
        'gateway',
        'metrics-0123456789',
        'admin-0123456789ab',
        'ops-0123456789abcd',
        'grafana-0123456789',
      ].sort(),
    );
    expect(Object.isFrozen(config.heldSecrets)).toBe(true);
    expect(
      loadWorkerConfig({ REDIS_URL: 'rediss-cluster://:clusterpass@10.0.0.1:7000' }).heldSecrets,
    ).toEqual(['clusterpass']);
    expect(loadWorkerConfig({}).heldSecrets).toEqual([]);
  });

  it('reads LEASE_MS and THREAD_IDLE_TTL_MS', () => {
    const config = loadWorkerConfig({ LEASE_MS: '12000', THREAD_IDLE_TTL_MS: '86400000' });
    expect(config).toMatchObject({ leaseMs: 12_000, threadIdleTtlMs: 86_400_000 });
  });

  it('takes a Redis Cluster by its seed nodes, with one doorbell queue per primary of the smallest Cluster', () => {
    const url = 'redis-cluster://10.0.0.1:7000,10.0.0.2:7000';
    expect(loadWorkerConfig({ REDIS_URL: url })).toMatchObject({ redisUrl: url, doorbellQueues: 3 });
    expect(loadWorkerConfig({ REDIS_URL: url, DOORBELL_QUEUES: '6' }).doorbellQueues).toBe(6);
    expect(loadWorkerConfig({}).doorbellQueues).toBe(1);
  });

  it('reads AGENT_AUTH_METHOD, blank meaning unset', () => {
    expect(loadWorkerConfig({}).agentAuthMethod).toBeUndefined();
    expect(loadWorkerConfig({ AGENT_AUTH_METHOD: ' ' }).agentAuthMethod).toBeUndefined();
    expect(loadWorkerConfig({ AGENT_AUTH_METHOD: 'openai-api-key' }).agentAuthMethod).toBe('openai-api-key');
  });

  it('reads AGENT_SESSION_MODE and AGENT_MCP_SERVERS, by default none', () => {
    expect(loadWorkerConfig({})).toMatchObject({ agentSessionMode: undefined, agentMcpServers: [] });
    const config = loadWorkerConfig({
      AGENT_SESSION_MODE: ' code ',
      AGENT_MCP_SERVERS: JSON.stringify([
        { name: 'files', command: 'mcp-files', args: ['/srv'], env: [{ name: 'TOKEN', value: 't' }] },
        { name: 'bare', command: 'mcp-bare' },
        { type: 'http', name: 'docs', url: 'https://mcp.example/', headers: [{ name: 'A', value: 'b' }] },
        { type: 'sse', name: 'events', url: 'http://localhost:9000/sse' },
      ]),
    });
    expect(config.agentSessionMode).toBe('code');
    expect(config.agentMcpServers).toEqual([
      { name: 'files', command: 'mcp-files', args: ['/srv'], env: [{ name: 'TOKEN', value: 't' }] },
      { name: 'bare', command: 'mcp-bare', args: [], env: [] },
      { type: 'http', name: 'docs', url: 'https://mcp.example/', headers: [{ name: 'A', value: 'b' }] },
      { type: 'sse', name: 'events', url: 'http://localhost:9000/sse', headers: [] },
    ]);
  });

  it.each([
    ['{"name": "x"}', 'must be a JSON array of MCP servers'],
    ['[oops', 'must be a JSON array of MCP servers ('],
    ['[42]', 'server 0: must be an object'],
    ['[{"command": "x"}]', 'server 0: "name" must be a non-empty string'],
    ['[{"name": "x"}]', 'server 0: "command" must be a non-empty string'],
    ['[{"name": "x", "command": "y", "args": "z"}]', 'server 0: "args" must be a list of strings'],
    ['[{"name": "x", "command": "y", "env": {"A": "b"}}]', 'server 0: "env" must be a list of {"name"'],
    [
      '[{"name": "x", "command": "y", "url": "http://h/"}]',
      'server 0: unknown field "url" for a stdio server',
    ],
    ['[{"type": "ws", "name": "x", "url": "ws://h/"}]', 'server 0: "type" must be "stdio"'],
    ['[{"type": "http", "name": "x", "url": "ftp://h/"}]', 'server 0: "url" must be an http(s) URL'],
    [
      '[{"type": "sse", "name": "x", "url": "http://h/", "headers": [{"name": "A"}]}]',
      '"headers" must be a list',
    ],
    ['[{"name": "x", "command": "a"}, {"name": "x", "command": "b"}]', 'server name "x" is given twice'],
  ])('refuses AGENT_MCP_SERVERS=%s, naming the variable', (raw, message) => {
    expect(() => loadWorkerConfig({ AGENT_MCP_SERVERS: raw })).toThrow(ConfigError);
    expect(() => loadWorkerConfig({ AGENT_MCP_SERVERS: raw })).toThrow(`AGENT_MCP_SERVERS: `);
    expect(() => loadWorkerConfig({ AGENT_MCP_SERVERS: raw })).toThrow(message);
  });

  it('reads permission rules by tool kind', () => {
    const config = loadWorkerConfig({
      AGENT_PERMISSION_POLICY: 'reject',
      AGENT_PERMISSION_RULES: 'read=allow, edit=allow-once,switch_mode=allow-always',
    });
    expect(config.permissionPolicy).toBe('reject');
    expect(config.permissionRules).toEqual({
      read: 'allow',
      edit: 'allow-once',
      switch_mode: 'allow-always',
    });
  });

  it('reads AGENT_COMMAND as a command line', () => {
    expect(
      loadWorkerConfig({ AGENT_COMMAND: `npx acp-agent --model "big one" --flag='x y'` }).agentCommand,
    ).toEqual({
      command: 'npx',
      args: ['acp-agent', '--model', 'big one', '--flag=x y'],
    });
    expect(splitCommandLine('X', String.raw`a\ b "c \"d\""`)).toEqual(['a b', 'c "d"']);
  });

  it.each([
    [{ MAX_BATCH_MESSAGES: 'ten' }, 'MAX_BATCH_MESSAGES: must be a whole number, got "ten"'],
    [{ MAX_BATCH_MESSAGES: '0' }, 'MAX_BATCH_MESSAGES: must be between 1 and'],
    [{ LEASE_MS: '2999' }, 'LEASE_MS: must be between 3000 and 3600000, got 2999'],
    [{ LEASE_MS: '30s' }, 'LEASE_MS: must be a whole number, got "30s"'],
    [
      { LEASE_MS: '6000' },
      'WORKER_STALL_TOLERANCE_MS: must be below two thirds of LEASE_MS (6000), so a frozen worker',
    ],
    [{ THREAD_IDLE_TTL_MS: '60000' }, 'THREAD_IDLE_TTL_MS: must be between 600000 and'],
    [
      { MESSAGE_PROCESSING_MODE: 'batch' },
      'MESSAGE_PROCESSING_MODE: must be one of per-thread, per-lane, per-message',
    ],
    [{ REDIS_URL: 'http://x' }, 'REDIS_URL: must use redis: or rediss:'],
    [
      { REDIS_URL: 'redis-cluster://10.0.0.1' },
      "REDIS_URL: Redis Cluster seed node must be host:port, got '10.0.0.1'",
    ],
    [
      { REDIS_URL: 'redis-cluster://10.0.0.1:7000', DOORBELL_QUEUES: '0' },
      'DOORBELL_QUEUES: must be between 1',
    ],
    [{ GATEWAY_REPLY_URL: 'not a url' }, 'GATEWAY_REPLY_URL: must be an absolute URL'],
    [{ AGENT_COMMAND: '"unterminated' }, 'AGENT_COMMAND: unterminated " quote'],
    [{ STALL_SOFT_MS: '5000', STALL_HARD_MS: '5000' }, 'STALL_HARD_MS: must be greater than STALL_SOFT_MS'],
    [{ WORKING_REACTION_DELAY_MS: '-1' }, 'WORKING_REACTION_DELAY_MS: must be a whole number'],
    [{ WORKING_REACTION_DELAY_MS: '600001' }, 'WORKING_REACTION_DELAY_MS: must be between 0 and 600000'],
    [{ AGENT_PERMISSION_POLICY: 'openab' }, 'AGENT_PERMISSION_POLICY: must be one of reject, allow-once'],
    [{ AGENT_PERMISSION_RULES: 'read' }, 'AGENT_PERMISSION_RULES: expected kind=policy pairs'],
    [{ AGENT_PERMISSION_RULES: 'shell=allow' }, 'AGENT_PERMISSION_RULES: tool kind must be one of read,'],
    [{ AGENT_PERMISSION_RULES: 'read=yes' }, 'AGENT_PERMISSION_RULES: policy of read must be one of'],
    [{ AGENT_PERMISSION_RULES: 'read=allow,read=reject' }, 'AGENT_PERMISSION_RULES: read is given twice'],
    [{ ATTACHMENT_MAX_TURN_BYTES: '33554432' }, 'ATTACHMENT_MAX_TURN_BYTES: must be between 1 and 31457280'],
    [
      { ATTACHMENT_MAX_TURN_BYTES: '2000', ATTACHMENT_WORKER_BYTES: '1000' },
      'ATTACHMENT_WORKER_BYTES: must be at least ATTACHMENT_MAX_TURN_BYTES (2000)',
    ],
  ])('refuses %o naming the variable', (env, message) => {
    expect(() => loadWorkerConfig(env)).toThrow(ConfigError);
    expect(() => loadWorkerConfig(env)).toThrow(message);
  });
});
