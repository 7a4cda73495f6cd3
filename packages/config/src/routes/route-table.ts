import type { McpServer } from '@tributary/acp';
import { PERMISSION_POLICIES, type PermissionPolicy, TOOL_KINDS } from '@tributary/acp/permission-policy';
import type { ProcessingMode } from '@tributary/queue/config';
import { isMap, isScalar, isSeq, LineCounter, type Node, parseDocument, type YAMLMap } from 'yaml';
import { McpServersError, parseMcpServers } from '../agent-settings.js';
import { approverProblem } from '../approvers.js';
import { PROCESSING_MODES } from '../processing-modes.js';

type ToolKind = (typeof TOOL_KINDS)[number];

/**
 * What a route changes for its threads, over the worker's and ingress's environment (the default
 * profile). Recorded with each thread at its first message, so a later change of the table reaches new
 * threads only.
 */
export interface RouteProfile {
  permissionPolicy?: PermissionPolicy;
  permissionRules?: Readonly<Partial<Record<ToolKind, PermissionPolicy>>>;
  /** Who may answer a permission request besides the thread's starter, as APPROVERS writes them. */
  approvers?: readonly string[];
  /** Only these senders' messages are accepted (ids), as ALLOWED_USERS; unset: anyone. */
  allowedUsers?: readonly string[];
  /** The worker pool that serves the threads (WORKER_POOL of its workers); unset: the default pool. */
  pool?: string;
  /** The ACP session mode each of its threads' sessions is put in, as AGENT_SESSION_MODE; unset: that. */
  sessionMode?: string;
  /**
   * The MCP servers its threads' sessions are given, in AGENT_MCP_SERVERS's shape, replacing that list
   * whole (`[]`: none); unset: AGENT_MCP_SERVERS.
   */
  mcpServers?: readonly McpServer[];
  /** Whether a message that arrives mid-turn is sent into the running turn, over STEERING's word. */
  steering?: boolean;
  /** How its threads' messages are batched, over MESSAGE_PROCESSING_MODE(S)' word for the platform. */
  processingMode?: ProcessingMode;
  /** Its threads' batch caps, over MAX_BATCH_MESSAGES and MAX_BATCH_TOKENS. */
  maxBatchMessages?: number;
  maxBatchTokens?: number;
}

/** Where a message comes from, as a route matches it. */
export interface RoutePlace {
  platform: string;
  /** Slack's team id or Discord's guild id, where the platform has workspaces. */
  workspaceId?: string | undefined;
  channelId: string;
}

/** The route a thread takes: its name (a metric label) and its profile. */
export interface ThreadRoute {
  route: string;
  profile: RouteProfile;
}

/** The route of threads that match no route: the environment's settings, unchanged. */
export const DEFAULT_ROUTE: ThreadRoute = Object.freeze({ route: 'default', profile: Object.freeze({}) });

interface Route {
  name: string;
  platform: string;
  workspace: RegExp | undefined;
  channel: RegExp | undefined;
  profile: RouteProfile;
  /** Tokens the route's threads may spend in a UTC day, all together (docs/adr/0059). */
  dailyTokenBudget: number | undefined;
  /** How many of the route's threads may run a turn at once across the fleet (docs/adr/0062). */
  maxConcurrentTurns: number | undefined;
  /** The route's share of its pool's dispatch against other busy routes' (docs/adr/0063); unset: 1. */
  dispatchWeight: number | undefined;
  /** Messages a conversation of the route may send a minute, over RATE_LIMIT_PER_MINUTE (docs/adr/0058). */
  messagesPerMinute: number | undefined;
}

/** A route table that cannot be used; the message names the file, the line and the column. */
export class RouteTableError extends Error {
  constructor(
    readonly source: string,
    readonly line: number,
    readonly column: number,
    detail: string,
  ) {
    super(`${source}:${line}:${column}: ${detail}`);
    this.name = 'RouteTableError';
  }
}

/** Route names are metric labels: short, and few. */
const ROUTE_NAME = /^[a-z][a-z0-9-]{0,39}$/;
const MAX_ROUTES = 200;
/** A weight lets that many times a weight-1 route's doorbells in ahead of others'; beyond this it is a flood. */
const MAX_DISPATCH_WEIGHT = 100;
/** The route of threads no route matches, and the label of a turn whose route could not be read. */
const RESERVED_ROUTES = [DEFAULT_ROUTE.route, 'unread'];

/** Whether `name` can name a route a thread takes: one of a table's, or the default. */
export function isRouteName(name: string): boolean {
  return ROUTE_NAME.test(name);
}

/** Pool names are metric labels too, and part of the doorbell queues' keys. */
export function isPoolName(name: string): boolean {
  return ROUTE_NAME.test(name);
}
const PLATFORMS = ['slack', 'telegram', 'discord', 'gateway'];

/**
 * The routes of a file, first match wins: each maps a platform and, optionally, a workspace and a
 * channel (exact ids, or patterns with `*` and `?`) to a profile named in the file's `profiles`.
 */
export class RouteTable {
  private constructor(private readonly routes: readonly Route[]) {}

  /** No routes: every thread takes the default route. */
  static readonly EMPTY = new RouteTable([]);

  /** Parses and checks a route file's text; throws RouteTableError naming the first problem's line. */
  static parse(text: string, source: string): RouteTable {
    return new RouteTable(new RouteReader(text, source).read());
  }

  get names(): readonly string[] {
    return this.routes.map((route) => route.name);
  }

  /** The fleet-wide limit on concurrent turns of each route that sets one. */
  turnLimits(): Map<string, number> {
    return this.perRoute((route) => route.maxConcurrentTurns);
  }

  /** The dispatch weight of each route that sets one; the others weigh 1. */
  dispatchWeights(): Map<string, number> {
    return this.perRoute((route) => route.dispatchWeight);
  }

  /** The daily token budget of each route that sets one. */
  budgets(): Map<string, number> {
    return this.perRoute((route) => route.dailyTokenBudget);
  }

  private perRoute(setting: (route: Route) => number | undefined): Map<string, number> {
    return new Map(
      this.routes.flatMap((route) => {
        const value = setting(route);
        return value === undefined ? [] : [[route.name, value] as const];
      }),
    );
  }

  resolve(place: RoutePlace): ThreadRoute {
    const route = this.match(place);
    return route === undefined ? DEFAULT_ROUTE : { route: route.name, profile: route.profile };
  }

  /** How many messages a minute a conversation at `place` may send, where its route says. */
  messagesPerMinute(place: RoutePlace): number | undefined {
    return this.match(place)?.messagesPerMinute;
  }

  private match(place: RoutePlace): Route | undefined {
    return this.routes.find(
      (candidate) =>
        candidate.platform === place.platform &&
        matches(candidate.workspace, place.workspaceId) &&
        matches(candidate.channel, place.channelId),
    );
  }
}

/** A thread's recorded route (`JSON.stringify` of a ThreadRoute), checked as a route file's profiles are. */
export function readThreadRoute(text: string): ThreadRoute {
  return new RouteReader(text, "the thread's route record").threadRoute();
}

function matches(pattern: RegExp | undefined, value: string | undefined): boolean {
  return pattern === undefined || (value !== undefined && pattern.test(value));
}

/** `*` any run of characters, `?` one; everything else as written. */
function globPattern(glob: string): RegExp {
  const body = glob
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replaceAll('*', '.*')
    .replaceAll('?', '.');
  return new RegExp(`^${body}$`);
}

/** Reads the YAML document, keeping each node's place in the text for the errors. */
class RouteReader {
  private readonly lines = new LineCounter();

  constructor(
    private readonly text: string,
    private readonly source: string,
  ) {}

  read(): Route[] {
    const root = this.document();
    if (root === null) return [];
    const top = this.map(root, 'the file', ['profiles', 'routes']);
    const profiles = new Map<string, RouteProfile>();
    const profilesNode = top.get('profiles', true) as Node | undefined;
    if (profilesNode !== undefined) {
      for (const pair of this.map(profilesNode, 'profiles').items) {
        const name = this.string(pair.key as Node, 'a profile name');
        if (profiles.has(name)) throw this.at(pair.key as Node, `profile "${name}" is given twice`);
        profiles.set(name, this.profile(pair.value as Node, name));
      }
    }
    const routesNode = top.get('routes', true) as Node | undefined;
    if (routesNode === undefined) return [];
    if (!isSeq(routesNode)) throw this.at(routesNode, 'routes must be a list');
    if (routesNode.items.length > MAX_ROUTES) {
      throw this.at(routesNode, `at most ${MAX_ROUTES} routes: each is a metric label`);
    }
    const names = new Set<string>();
    return routesNode.items.map((item) => {
      const route = this.route(item as Node, profiles);
      if (names.has(route.name)) throw this.at(item as Node, `route "${route.name}" is given twice`);
      names.add(route.name);
      return route;
    });
  }

  threadRoute(): ThreadRoute {
    const owner = this.document();
    const record = this.map(owner, 'the record', ['route', 'profile']);
    return {
      route: this.string(this.required(record, 'route', owner), 'route'),
      profile: this.profile(this.required(record, 'profile', owner), 'of the record'),
    };
  }

  /** The document's root node (null for an empty text); a YAML syntax error names its place. */
  private document(): Node | null {
    const document = parseDocument(this.text, { lineCounter: this.lines, prettyErrors: false });
    const [problem] = document.errors;
    if (problem !== undefined) throw this.error(problem.pos[0], problem.message.split('\n')[0]!);
    return document.contents;
  }

  private route(node: Node, profiles: ReadonlyMap<string, RouteProfile>): Route {
    const route = this.map(node, 'a route', [
      'name',
      'platform',
      'workspace',
      'channel',
      'profile',
      'dailyTokenBudget',
      'maxConcurrentTurns',
      'dispatchWeight',
      'messagesPerMinute',
    ]);
    const name = this.string(this.required(route, 'name', node), 'name');
    if (!ROUTE_NAME.test(name) || RESERVED_ROUTES.includes(name)) {
      throw this.at(
        route.get('name', true) as Node,
        `name must be 1-40 of a-z, 0-9 and -, starting with a letter, and not "default" or "unread"; got "${name}"`,
      );
    }
    const platformNode = this.required(route, 'platform', node);
    const platform = this.string(platformNode, 'platform');
    if (!PLATFORMS.includes(platform)) {
      throw this.at(platformNode, `platform must be one of ${PLATFORMS.join(', ')}; got "${platform}"`);
    }
    const profileNode = this.required(route, 'profile', node);
    const profileName = this.string(profileNode, 'profile');
    const profile = profiles.get(profileName);
    if (profile === undefined) {
      throw this.at(profileNode, `no profile "${profileName}" under profiles`);
    }
    const pattern = (key: string) => {
      const value = route.get(key, true) as Node | undefined;
      return value === undefined ? undefined : globPattern(this.string(value, key));
    };
    const budget = route.get('dailyTokenBudget', true) as Node | undefined;
    const limit = route.get('maxConcurrentTurns', true) as Node | undefined;
    const weight = route.get('dispatchWeight', true) as Node | undefined;
    const rate = route.get('messagesPerMinute', true) as Node | undefined;
    return {
      name,
      platform,
      workspace: pattern('workspace'),
      channel: pattern('channel'),
      profile,
      dailyTokenBudget: budget === undefined ? undefined : this.count(budget, 'dailyTokenBudget'),
      maxConcurrentTurns: limit === undefined ? undefined : this.count(limit, 'maxConcurrentTurns'),
      dispatchWeight:
        weight === undefined ? undefined : this.count(weight, 'dispatchWeight', MAX_DISPATCH_WEIGHT),
      messagesPerMinute: rate === undefined ? undefined : this.count(rate, 'messagesPerMinute'),
    };
  }

  /** A whole number of at least 1 (and at most `max`). */
  private count(node: Node, what: string, max = Number.MAX_SAFE_INTEGER): number {
    const value = isScalar(node) ? node.value : undefined;
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1 || value > max) {
      const range = max === Number.MAX_SAFE_INTEGER ? 'of at least 1' : `from 1 to ${max}`;
      throw this.at(node, `${what} must be a whole number ${range}; got ${JSON.stringify(value ?? null)}`);
    }
    return value;
  }

  private profile(node: Node, name: string): RouteProfile {
    const fields = this.map(node, `profile "${name}"`, [
      'permissionPolicy',
      'permissionRules',
      'approvers',
      'allowedUsers',
      'pool',
      'sessionMode',
      'mcpServers',
      'steering',
      'processingMode',
      'maxBatchMessages',
      'maxBatchTokens',
    ]);
    const profile: {
      permissionPolicy?: PermissionPolicy;
      permissionRules?: Partial<Record<ToolKind, PermissionPolicy>>;
      approvers?: string[];
      allowedUsers?: string[];
      pool?: string;
      sessionMode?: string;
      mcpServers?: readonly McpServer[];
      steering?: boolean;
      processingMode?: ProcessingMode;
      maxBatchMessages?: number;
      maxBatchTokens?: number;
    } = {};
    const pool = fields.get('pool', true) as Node | undefined;
    if (pool !== undefined) {
      const name = this.string(pool, 'pool');
      if (!isPoolName(name)) {
        throw this.at(pool, `pool must be 1-40 of a-z, 0-9 and -, starting with a letter; got "${name}"`);
      }
      profile.pool = name;
    }
    const mode = fields.get('sessionMode', true) as Node | undefined;
    if (mode !== undefined) profile.sessionMode = this.string(mode, 'sessionMode');
    const servers = fields.get('mcpServers', true) as Node | undefined;
    if (servers !== undefined) profile.mcpServers = this.mcpServers(servers);
    const steering = fields.get('steering', true) as Node | undefined;
    if (steering !== undefined) {
      if (!isScalar(steering) || typeof steering.value !== 'boolean') {
        throw this.at(steering, 'steering must be true or false');
      }
      profile.steering = steering.value;
    }
    const processing = fields.get('processingMode', true) as Node | undefined;
    if (processing !== undefined) {
      const mode = this.string(processing, 'processingMode') as ProcessingMode;
      if (!PROCESSING_MODES.includes(mode)) {
        throw this.at(
          processing,
          `processingMode must be one of ${PROCESSING_MODES.join(', ')}; got "${mode}"`,
        );
      }
      profile.processingMode = mode;
    }
    for (const key of ['maxBatchMessages', 'maxBatchTokens'] as const) {
      const cap = fields.get(key, true) as Node | undefined;
      if (cap !== undefined) profile[key] = this.count(cap, key);
    }
    const policy = fields.get('permissionPolicy', true) as Node | undefined;
    if (policy !== undefined) profile.permissionPolicy = this.policy(policy, 'permissionPolicy');
    const rules = fields.get('permissionRules', true) as Node | undefined;
    if (rules !== undefined) {
      profile.permissionRules = {};
      for (const pair of this.map(rules, 'permissionRules').items) {
        const kind = this.string(pair.key as Node, 'a tool kind') as ToolKind;
        if (!TOOL_KINDS.includes(kind)) {
          throw this.at(pair.key as Node, `tool kind must be one of ${TOOL_KINDS.join(', ')}; got "${kind}"`);
        }
        profile.permissionRules[kind] = this.policy(pair.value as Node, kind);
      }
    }
    for (const key of ['approvers', 'allowedUsers'] as const) {
      const list = fields.get(key, true) as Node | undefined;
      if (list === undefined) continue;
      if (!isSeq(list)) throw this.at(list, `${key} must be a list`);
      profile[key] = list.items.map((item) => {
        const entry = this.string(item as Node, `an entry of ${key}`);
        const problem = key === 'approvers' ? approverProblem(entry) : undefined;
        if (problem !== undefined) throw this.at(item as Node, problem);
        return entry;
      });
    }
    return Object.freeze(profile);
  }

  private mcpServers(node: Node): readonly McpServer[] {
    try {
      return parseMcpServers(node.toJSON());
    } catch (error) {
      if (error instanceof McpServersError) throw this.at(node, `mcpServers: ${error.message}`);
      throw error;
    }
  }

  private policy(node: Node, what: string): PermissionPolicy {
    const policy = this.string(node, what) as PermissionPolicy;
    if (!PERMISSION_POLICIES.includes(policy)) {
      throw this.at(node, `${what} must be one of ${PERMISSION_POLICIES.join(', ')}; got "${policy}"`);
    }
    return policy;
  }

  /** A mapping whose keys are all among `known`, when given. */
  private map(node: Node | null, what: string, known?: readonly string[]): YAMLMap {
    if (!isMap(node)) throw this.at(node, `${what} must be a mapping`);
    for (const pair of node.items) {
      const key = this.string(pair.key as Node, 'a key');
      if (known !== undefined && !known.includes(key)) {
        throw this.at(pair.key as Node, `unknown key "${key}" in ${what}; known: ${known.join(', ')}`);
      }
    }
    return node;
  }

  private required(map: YAMLMap, key: string, owner: Node | null): Node {
    const value = map.get(key, true) as Node | undefined;
    if (value === undefined) throw this.at(owner, `"${key}" is missing`);
    return value;
  }

  private string(node: Node | null, what: string): string {
    if (node === null || !isScalar(node) || typeof node.value !== 'string' || node.value.trim() === '') {
      throw this.at(node, `${what} must be a non-empty string`);
    }
    return node.value.trim();
  }

  private at(node: Node | null, detail: string): RouteTableError {
    return this.error(node?.range?.[0] ?? 0, detail);
  }

  private error(offset: number, detail: string): RouteTableError {
    const { line, col } = this.lines.linePos(offset);
    return new RouteTableError(this.source, line, col, detail);
  }
}
