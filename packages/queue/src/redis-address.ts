/**
 * Where Redis is: `redis://` / `rediss://` for one server, or a Cluster given by seed nodes as
 * `redis-cluster://[user:password@]host:port[,host:port...]` (`rediss-cluster://` for TLS). The
 * client learns every other node from the seeds, so one reachable seed is enough to start.
 */
export type RedisAddress =
  | { kind: 'single'; url: string }
  | {
      kind: 'cluster';
      nodes: { host: string; port: number }[];
      username: string | undefined;
      password: string | undefined;
      tls: object | undefined;
    };

const CLUSTER_SCHEMES: Record<string, boolean> = { 'redis-cluster:': false, 'rediss-cluster:': true };

/** Parses a Redis address; throws a RangeError saying what is wrong. */
export function redisAddress(url: string): RedisAddress {
  const scheme = /^[a-z][a-z0-9+.-]*:/i.exec(url)?.[0].toLowerCase();
  if (scheme === undefined || !(scheme in CLUSTER_SCHEMES)) return { kind: 'single', url };
  const rest = url.slice(scheme.length).replace(/^\/\//, '').replace(/\/$/, '');
  const at = rest.lastIndexOf('@');
  const [username, password] = at < 0 ? [] : splitCredentials(rest.slice(0, at));
  const nodes = (at < 0 ? rest : rest.slice(at + 1)).split(',').map(parseNode);
  return { kind: 'cluster', nodes, username, password, tls: CLUSTER_SCHEMES[scheme] ? {} : undefined };
}

function splitCredentials(userInfo: string): [string | undefined, string | undefined] {
  const colon = userInfo.indexOf(':');
  const user = colon < 0 ? userInfo : userInfo.slice(0, colon);
  const password = colon < 0 ? undefined : decodeURIComponent(userInfo.slice(colon + 1));
  return [user === '' ? undefined : decodeURIComponent(user), password];
}

function parseNode(node: string): { host: string; port: number } {
  const match = /^(\[[0-9a-f:.]+\]|[^:[\]\s]+):(\d{1,5})$/i.exec(node.trim());
  const port = Number(match?.[2]);
  if (!match || port < 1 || port > 65_535) {
    throw new RangeError(`Redis Cluster seed node must be host:port, got '${node}'`);
  }
  return { host: match[1]!.replace(/^\[|\]$/g, ''), port };
}
