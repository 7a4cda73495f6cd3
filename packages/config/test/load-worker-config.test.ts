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
      agentCwd: '/srv/agent',
      maxBatchMessages: 10,
      maxBatchTokens: 24_000,
      processingMode: 'per-thread',
      turnTimeoutMs: 600_000,
      stallSoftMs: 10_000,
      stallHardMs: 30_000,
      permissionPolicy: 'allow-once',
      permissionRules: {},
    });
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('reads AGENT_AUTH_METHOD, blank meaning unset', () => {
    expect(loadWorkerConfig({}).agentAuthMethod).toBeUndefined();
    expect(loadWorkerConfig({ AGENT_AUTH_METHOD: ' ' }).agentAuthMethod).toBeUndefined();
    expect(loadWorkerConfig({ AGENT_AUTH_METHOD: 'openai-api-key' }).agentAuthMethod).toBe('openai-api-key');
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
    [
      { MESSAGE_PROCESSING_MODE: 'batch' },
      'MESSAGE_PROCESSING_MODE: must be one of per-thread, per-lane, per-message',
    ],
    [{ REDIS_URL: 'http://x' }, 'REDIS_URL: must use redis: or rediss:'],
    [{ GATEWAY_REPLY_URL: 'not a url' }, 'GATEWAY_REPLY_URL: must be an absolute URL'],
    [{ AGENT_COMMAND: '"unterminated' }, 'AGENT_COMMAND: unterminated " quote'],
    [{ STALL_SOFT_MS: '5000', STALL_HARD_MS: '5000' }, 'STALL_HARD_MS: must be greater than STALL_SOFT_MS'],
    [{ AGENT_PERMISSION_POLICY: 'openab' }, 'AGENT_PERMISSION_POLICY: must be one of reject, allow-once'],
    [{ AGENT_PERMISSION_RULES: 'read' }, 'AGENT_PERMISSION_RULES: expected kind=policy pairs'],
    [{ AGENT_PERMISSION_RULES: 'shell=allow' }, 'AGENT_PERMISSION_RULES: tool kind must be one of read,'],
    [{ AGENT_PERMISSION_RULES: 'read=yes' }, 'AGENT_PERMISSION_RULES: policy of read must be one of'],
    [{ AGENT_PERMISSION_RULES: 'read=allow,read=reject' }, 'AGENT_PERMISSION_RULES: read is given twice'],
  ])('refuses %o naming the variable', (env, message) => {
    expect(() => loadWorkerConfig(env)).toThrow(ConfigError);
    expect(() => loadWorkerConfig(env)).toThrow(message);
  });
});
