import type { GatewayDispatchPayload } from 'discord-api-types/v10';
import { describe, expect, it } from 'vitest';
import { ChannelDirectory } from '../src/channel-directory.js';

function dispatch(t: string, d: unknown): GatewayDispatchPayload {
  return { op: 0, t, s: 1, d } as GatewayDispatchPayload;
}

const thread = (id: string, parent: string) => ({ id, type: 11, parent_id: parent, guild_id: 'G' });

describe('channel directory', () => {
  it('gives a plain channel its type but no parent, even when it sits in a category', () => {
    const directory = new ChannelDirectory(10);
    directory.observe(dispatch('CHANNEL_CREATE', { id: 'C', type: 0, parent_id: 'CATEGORY', guild_id: 'G' }));
    expect(directory.describe('C')).toEqual({ id: 'C', parent_id: null, type: 0 });
  });

  it('follows a thread through update and delete', () => {
    const directory = new ChannelDirectory(10);
    directory.observe(dispatch('THREAD_CREATE', thread('T', 'C1')));
    directory.observe(dispatch('THREAD_UPDATE', { ...thread('T', 'C1'), type: 12 }));
    expect(directory.describe('T')).toEqual({ id: 'T', parent_id: 'C1', type: 12 });
    directory.observe(dispatch('THREAD_DELETE', { id: 'T', type: 12, parent_id: 'C1', guild_id: 'G' }));
    expect(directory.describe('T')).toEqual({ id: 'T', parent_id: null, type: null });
  });

  it('keeps at most its capacity, forgetting the least recently used first', () => {
    const directory = new ChannelDirectory(2);
    directory.observe(dispatch('THREAD_CREATE', thread('A', 'C')));
    directory.observe(dispatch('THREAD_CREATE', thread('B', 'C')));
    directory.describe('A');
    directory.observe(dispatch('THREAD_CREATE', thread('D', 'C')));
    expect(directory.size).toBe(2);
    expect(directory.describe('B').parent_id).toBeNull();
    expect(directory.describe('A').parent_id).toBe('C');
    expect(directory.describe('D').parent_id).toBe('C');
  });

  it('takes an unavailable guild without channel lists in its stride', () => {
    const directory = new ChannelDirectory(10);
    directory.observe(dispatch('GUILD_CREATE', { id: 'G', unavailable: true }));
    expect(directory.size).toBe(0);
  });
});
