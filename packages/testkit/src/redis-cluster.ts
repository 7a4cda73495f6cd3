import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { freePort } from './free-port.js';
import type { RedisHandle } from './redis-handle.js';
import { type Appendfsync, type RedisProcess, redisProcess } from './redis-process.js';
import { waitFor } from './wait-for.js';

const run = promisify(execFile);

export interface StartRedisClusterOptions {
  primaries?: number;
  /** Replicas per primary (the failover test uses one). */
  replicas?: number;
  appendfsync?: Appendfsync;
  /**
   * How long a node may be unreachable before the cluster calls it failed and a replica takes over.
   * Short by default, so a failover test waits seconds, not the production default of 15.
   */
  nodeTimeoutMs?: number;
}

/** One node of a harness cluster. */
export interface ClusterNode extends RedisProcess {
  /** The node's cluster id (from CLUSTER MYID), stable across restarts. */
  readonly id: string;
}

/** A Redis Cluster the harness owns: `url` is its `redis-cluster://` seed list. */
export interface RedisClusterHandle extends RedisHandle {
  readonly nodes: readonly ClusterNode[];
  /** The nodes that are primaries now, as the cluster itself reports it. */
  primaries(): Promise<ClusterNode[]>;
  /** Resolves once every running node reports `cluster_state:ok` and every replica is in sync. */
  healthy(timeoutMs?: number): Promise<void>;
}

/**
 * Starts a Redis Cluster on loopback from the machine's redis-server: `primaries` primaries (3 by
 * default, the smallest Cluster Redis accepts) with `replicas` replicas each, private ports, a private
 * folder per node with AOF, slots split evenly by `redis-cli --cluster create`.
 */
export async function startRedisCluster(options: StartRedisClusterOptions = {}): Promise<RedisClusterHandle> {
  const { primaries = 3, replicas = 0, appendfsync = 'everysec', nodeTimeoutMs = 1_000 } = options;
  const root = await mkdtemp(join(tmpdir(), 'tributary-cluster-'));
  const processes: RedisProcess[] = [];
  for (let i = 0; i < primaries * (1 + replicas); i++) {
    const dir = join(root, `node-${i}`);
    await mkdir(dir);
    const busPort = await freePort();
    processes.push(
      redisProcess(await freePort(), dir, appendfsync, [
        '--cluster-enabled',
        'yes',
        '--cluster-config-file',
        'nodes.conf',
        '--cluster-node-timeout',
        String(nodeTimeoutMs),
        '--cluster-port',
        String(busPort),
      ]),
    );
  }
  const stopAll = async (signal: NodeJS.Signals) => {
    await Promise.all(processes.map((node) => node.kill(signal)));
  };
  try {
    await Promise.all(processes.map((node) => node.launch()));
    const addresses = processes.map((node) => `127.0.0.1:${node.port}`);
    await run('redis-cli', [
      '--cluster',
      'create',
      ...addresses,
      '--cluster-replicas',
      String(replicas),
      '--cluster-yes',
    ]);
  } catch (error) {
    await stopAll('SIGKILL');
    await rm(root, { recursive: true, force: true });
    throw error;
  }
  const nodes: ClusterNode[] = [];
  for (const node of processes) nodes.push(Object.assign(node, { id: await ask(node, 'CLUSTER', 'MYID') }));

  const healthy = async (timeoutMs = 20_000) => {
    await waitFor(
      async () => {
        for (const node of nodes.filter((n) => n.running)) {
          if (!/^cluster_state:ok/m.test(await ask(node, 'CLUSTER', 'INFO'))) return false;
          // A replica still in its first sync would make WAIT time out.
          const replication = await ask(node, 'INFO', 'replication');
          if (/^role:slave/m.test(replication) && !/^master_link_status:up/m.test(replication)) return false;
        }
        return true;
      },
      {
        what: 'every running cluster node to report cluster_state:ok, every replica in sync',
        timeoutMs,
        intervalMs: 50,
      },
    );
  };
  await healthy();
  const refuse = async (): Promise<never> => {
    throw new Error('a cluster is not wiped as a whole; kill and restart its nodes');
  };
  return {
    url: `redis-cluster://${nodes.map((node) => `127.0.0.1:${node.port}`).join(',')}`,
    owned: true,
    nodes,
    async primaries() {
      const reporter = nodes.find((node) => node.running);
      if (!reporter) return [];
      const table = await ask(reporter, 'CLUSTER', 'NODES');
      const ids = new Set(
        table
          .split('\n')
          .map((line) => line.split(' '))
          .filter((fields) => fields[2]?.split(',').includes('master') && !fields[2].includes('fail'))
          .map((fields) => fields[0]),
      );
      return nodes.filter((node) => ids.has(node.id));
    },
    healthy,
    kill: stopAll,
    async restart() {
      await Promise.all(nodes.filter((node) => !node.running).map((node) => node.launch()));
      await healthy();
    },
    wipe: refuse,
    async stop() {
      await stopAll('SIGTERM');
      await rm(root, { recursive: true, force: true });
    },
  };
}

/** One command to one node, on a short-lived connection. */
async function ask(node: RedisProcess, ...command: [string, ...string[]]): Promise<string> {
  const client = new Redis(node.url, { maxRetriesPerRequest: 0, retryStrategy: () => null });
  client.on('error', () => {});
  try {
    return String(await client.call(...command));
  } finally {
    client.disconnect();
  }
}
