import type { McpServer, PermissionRules } from '@tributary/acp';
import { DEFAULT_ROUTE, type RouteProfile, readThreadRoute, type ThreadRoute } from '@tributary/config';
import type { ThreadRoutes } from '@tributary/queue';
import type { Logger } from 'pino';

/** A thread whose route record could not be read: nothing is allowed that its route might forbid. */
const UNREAD_ROUTE: ThreadRoute = Object.freeze({
  route: 'unread',
  profile: Object.freeze({ permissionPolicy: 'reject' as const, permissionRules: Object.freeze({}) }),
});

/**
 * The route of each thread whose turn runs here, read from its record as the turn starts and held
 * until it ends: what the agent's permission requests in that turn are answered by.
 */
export class ThreadProfiles {
  private readonly routes = new Map<string, ThreadRoute>();

  constructor(
    /** Where ingress records each thread's route (docs/adr/0058). */
    private readonly records: Pick<ThreadRoutes, 'of' | 'renew'>,
    /** AGENT_PERMISSION_POLICY and AGENT_PERMISSION_RULES: the default route's. */
    private readonly defaults: PermissionRules,
    private readonly logger: Logger,
  ) {}

  /**
   * Reads the thread's route, and keeps its record alive; a thread without a record (it began before
   * routes) takes the default.
   * One whose record cannot be read fails closed, at warn: its turn runs with every permission request
   * refused, since its route may be stricter than the environment.
   */
  async load(thread: string): Promise<ThreadRoute> {
    let route = DEFAULT_ROUTE;
    try {
      const record = await this.records.of(thread);
      if (record !== undefined) {
        route = readThreadRoute(record);
        // Kept while the thread's work waits, not only while messages arrive (ThreadRoutes.renew).
        await this.records.renew(thread);
      }
    } catch (error) {
      this.logger.warn(
        { err: error, thread },
        "thread's route not read; this turn's permission requests are refused",
      );
      route = UNREAD_ROUTE;
    }
    this.routes.set(thread, route);
    return route;
  }

  release(thread: string): void {
    this.routes.delete(thread);
  }

  /** Whether a thread's route steers mid-turn messages into the running turn, where it says. */
  steering(thread: string): boolean | undefined {
    return this.routes.get(thread)?.profile.steering;
  }

  /** The MCP servers of a thread's route, where it sets them (a session opened in its turn gets them). */
  mcpServers(thread: string): readonly McpServer[] | undefined {
    return this.routes.get(thread)?.profile.mcpServers;
  }

  /** The session mode of a thread's route, where it sets one (a session opened in its turn takes it). */
  sessionMode(thread: string): string | undefined {
    return this.routes.get(thread)?.profile.sessionMode;
  }

  /**
   * The permission rules of a thread's turn: a profile that sets a policy or rules replaces the
   * environment's whole, so that its stance is what the route file says and no rule of the
   * environment widens it.
   */
  permissions(thread: string): PermissionRules {
    const profile: RouteProfile = this.routes.get(thread)?.profile ?? {};
    if (profile.permissionPolicy === undefined && profile.permissionRules === undefined) return this.defaults;
    return {
      policy: profile.permissionPolicy ?? this.defaults.policy,
      ...(profile.permissionRules === undefined ? {} : { byKind: profile.permissionRules }),
    };
  }
}
