import { describe, expect, it } from 'vitest';
import { ConfigError } from '../src/config-error.js';
import { loadWorkerConfig, processingModeOf } from '../src/load-config.js';

describe('processing modes and session affinity', () => {
  it('defaults to per-thread everywhere, affinity on, 8 sessions (never fewer than turns)', () => {
    expect(loadWorkerConfig({})).toMatchObject({
      processingMode: 'per-thread',
      processingModes: {},
      sessionAffinity: true,
      sessionAffinityWaitMs: undefined,
      maxSessions: 8,
    });
    expect(loadWorkerConfig({ WORKER_CONCURRENCY: '64' }).maxSessions).toBe(64);
  });

  it('takes a mode per platform, by the thread key’s first segment, over the default', () => {
    const config = loadWorkerConfig({
      MESSAGE_PROCESSING_MODE: 'per-message',
      MESSAGE_PROCESSING_MODES: 'slack=per-lane, telegram=per-thread',
      SESSION_AFFINITY: 'off',
      SESSION_AFFINITY_WAIT_MS: '250',
    });
    expect(config).toMatchObject({ sessionAffinity: false, sessionAffinityWaitMs: 250 });
    expect(
      ['slack:C1:T1', 'telegram:42:7', 'discord:G:C', 'slack', 'slackware:x'].map((t) =>
        processingModeOf(config, t),
      ),
    ).toEqual(['per-lane', 'per-thread', 'per-message', 'per-message', 'per-message']);
  });

  it.each([
    [
      { MESSAGE_PROCESSING_MODES: 'slack' },
      'MESSAGE_PROCESSING_MODES: expected platform=mode pairs, got "slack"',
    ],
    [{ MESSAGE_PROCESSING_MODES: 'slack=batch' }, 'MESSAGE_PROCESSING_MODES: mode of slack must be one of'],
    [{ MESSAGE_PROCESSING_MODES: 'slack=per-lane,slack=per-thread' }, 'slack is given twice'],
    [{ WORKER_CONCURRENCY: '8', AGENT_MAX_SESSIONS: '4' }, 'AGENT_MAX_SESSIONS: must be between 8 and'],
    [{ SESSION_AFFINITY: 'yes' }, 'SESSION_AFFINITY: must be one of on, off'],
    [{ SESSION_AFFINITY_WAIT_MS: '0' }, 'SESSION_AFFINITY_WAIT_MS: must be between 1 and'],
    [{ SESSION_AFFINITY_WAIT_MS: '4001' }, 'SESSION_AFFINITY_WAIT_MS: must be between 1 and 4000'],
  ])('refuses %o naming the variable', (env, message) => {
    expect(() => loadWorkerConfig(env)).toThrow(ConfigError);
    expect(() => loadWorkerConfig(env)).toThrow(message);
  });
});
