import { describe, expect, it } from 'vitest';
import { redisAddress } from '../src/redis-address.js';

describe('Redis address', () => {
  it('passes a single-node URL through', () => {
    expect(redisAddress('redis://h:6379/2')).toEqual({ kind: 'single', url: 'redis://h:6379/2' });
  });

  it('reads a Cluster seed list with credentials, IPv6 hosts and TLS', () => {
    expect(redisAddress('rediss-cluster://app:p%40ss@10.0.0.1:7000,[::1]:7001/')).toEqual({
      kind: 'cluster',
      nodes: [
        { host: '10.0.0.1', port: 7000 },
        { host: '::1', port: 7001 },
      ],
      username: 'app',
      password: 'p@ss',
      tls: {},
    });
    expect(redisAddress('redis-cluster://a:1')).toMatchObject({ username: undefined, tls: undefined });
  });

  it.each(['redis-cluster://', 'redis-cluster://a:1,,b:2', 'redis-cluster://a:99999', 'redis-cluster://a'])(
    'refuses %s, saying what a seed must look like',
    (url) => {
      expect(() => redisAddress(url)).toThrow(/seed node must be host:port/);
    },
  );
});
