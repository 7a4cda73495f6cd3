import { describe, expect, it } from 'vitest';
import { loadWorkerConfig } from '../src/load-config.js';
import { conversationParts, safeSegment, threadPath } from '../src/thread-path.js';

describe('thread paths', () => {
  it.each([
    ['slack:C123:1712.000100', { platform: 'slack', channel: 'C123', thread: '1712.000100' }],
    ['gateway:discord:C1:T1', { platform: 'gateway', channel: 'discord:C1', thread: 'T1' }],
    ['discord:998877', { platform: 'discord', channel: '998877', thread: '998877' }],
    ['bare', { platform: '', channel: 'bare', thread: 'bare' }],
  ])('splits %s into platform, channel and thread', (key, parts) => {
    expect(conversationParts(key)).toEqual(parts);
  });

  it.each([
    ['C123', 'C123'],
    ['1712.000100', '1712.000100'],
    ['..', '_2e.'],
    ['.', '_2e'],
    ['.hidden', '_2ehidden'],
    ['a/b', 'a_2fb'],
    ['a_2fb', 'a_5f2fb'],
    ['/etc', '_2fetc'],
    ['discord:C1', 'discord_3aC1'],
    ['', '_'],
    ['é', '_c3_a9'],
  ])('makes %j the safe segment %j', (value, segment) => {
    expect(safeSegment(value)).toBe(segment);
  });

  it('keeps distinct values distinct, and long ones short', () => {
    const values = ['a/b', 'a_2fb', 'a:b', 'a b', 'a.b', 'A/B', '..', '._2e'];
    expect(new Set(values.map(safeSegment)).size).toBe(values.length);
    const long = safeSegment('x'.repeat(500));
    expect(long.length).toBeLessThanOrEqual(96);
    expect(long).not.toBe(safeSegment(`${'x'.repeat(499)}y`));
  });

  it('puts each thread in a folder of its own under the root, whatever the thread key holds', () => {
    expect(threadPath('slack:C1:1712.5')).toBe('slack/C1/1712.5');
    expect(threadPath('gateway:../..:/etc')).toBe('gateway/_2e._2f../_2fetc');
    expect(threadPath('discord:998877')).toBe('discord/998877/998877');
  });

  it('reads the workspace root, what a reset does and the disk budget, and names the settings that replaced AGENT_CWD', () => {
    expect(loadWorkerConfig({ AGENT_WORKSPACES: 'work' }, '/srv')).toMatchObject({
      agentWorkspaces: '/srv/work',
      agentWorkspaceOnReset: 'keep',
    });
    expect(loadWorkerConfig({ AGENT_WORKSPACE_ON_RESET: 'delete' }, '/srv')).toMatchObject({
      agentWorkspaces: '/srv/.tributary/workspaces',
      agentWorkspaceOnReset: 'delete',
    });
    expect(loadWorkerConfig({}).agentWorkspaceBudgetBytes).toBe(10_240 * 1024 * 1024);
    expect(loadWorkerConfig({ AGENT_WORKSPACE_BUDGET_MB: '1' }).agentWorkspaceBudgetBytes).toBe(1024 * 1024);
    expect(loadWorkerConfig({ AGENT_WORKSPACE_BUDGET_MB: '0' }).agentWorkspaceBudgetBytes).toBe(0);
    expect(() => loadWorkerConfig({ AGENT_WORKSPACE_BUDGET_MB: '1.5' })).toThrow(
      'AGENT_WORKSPACE_BUDGET_MB: must be a whole number, got "1.5"',
    );
    expect(() => loadWorkerConfig({ AGENT_WORKSPACE_BUDGET_MB: '-1' })).toThrow('AGENT_WORKSPACE_BUDGET_MB');
    expect(() => loadWorkerConfig({ AGENT_CWD: '/srv/{thread}' })).toThrow(
      'AGENT_CWD: no longer read: each thread has its own workspace under AGENT_WORKSPACES',
    );
    expect(() => loadWorkerConfig({ AGENT_CWD_RETENTION: 'delete-on-reset' })).toThrow(
      'AGENT_CWD_RETENTION: no longer read: set AGENT_WORKSPACE_ON_RESET=delete',
    );
  });
});
