import { describe, expect, it } from 'vitest';
import {
  conversationParts,
  cwdTemplateRoot,
  expandCwdTemplate,
  readCwdTemplate,
  safeSegment,
} from '../src/cwd-template.js';
import { loadWorkerConfig } from '../src/load-config.js';

describe('conversation working directories', () => {
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

  it('expands a template into a directory under its root, whatever the thread key holds', () => {
    const template = '/srv/agents/{platform}/{channel}/{thread}';
    expect(expandCwdTemplate(template, 'slack:C1:1712.5')).toBe('/srv/agents/slack/C1/1712.5');
    expect(expandCwdTemplate(template, 'gateway:../..:/etc')).toBe('/srv/agents/gateway/_2e._2f../_2fetc');
    expect(cwdTemplateRoot(template)).toBe('/srv/agents');
    expect(cwdTemplateRoot('/srv/{platform}-agents/x')).toBe('/srv');
    expect(cwdTemplateRoot('/srv/agent')).toBe('/srv/agent');
  });

  it('refuses unknown placeholders and makes relative templates absolute', () => {
    expect(() => readCwdTemplate('AGENT_CWD', '/srv/{user}', '/')).toThrow(
      'AGENT_CWD: unknown placeholder {user}',
    );
    expect(readCwdTemplate('AGENT_CWD', 'work/{thread}', '/home/node')).toBe('/home/node/work/{thread}');
  });

  it('deletes directories on reset only when each thread has its own', () => {
    expect(
      loadWorkerConfig({ AGENT_CWD: '/srv/{thread}', AGENT_CWD_RETENTION: 'delete-on-reset' }),
    ).toMatchObject({ agentCwd: '/srv/{thread}', agentCwdRetention: 'delete-on-reset' });
    expect(() =>
      loadWorkerConfig({ AGENT_CWD: '/srv/{channel}', AGENT_CWD_RETENTION: 'delete-on-reset' }),
    ).toThrow('AGENT_CWD_RETENTION: delete-on-reset needs {thread} in AGENT_CWD');
  });
});
