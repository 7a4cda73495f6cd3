import type { Sender } from '@tributary/packing';
import { type PlatformClient, platformOfThread, type UserNames } from '@tributary/platforms';
import type { Logger } from 'pino';
import { withinDeadline } from './within-deadline.js';

export interface SenderNamesOptions {
  /** How long a looked-up name is trusted; people rename themselves rarely. */
  ttlMs: number;
  /** How long a failed lookup is remembered, so a platform outage costs one call per user, not one per message. */
  failureTtlMs: number;
  /** A lookup slower than this leaves the id; the acknowledgement must stay fast. */
  timeoutMs: number;
  /** Users remembered before the cache starts over (a bound on memory, not on behaviour). */
  maxEntries: number;
}

const DEFAULTS: SenderNamesOptions = {
  ttlMs: 60 * 60 * 1000,
  failureTtlMs: 60 * 1000,
  timeoutMs: 1_000,
  maxEntries: 10_000,
};

/**
 * Names for senders a platform's event names by id alone (a Slack event carries `user`, not a name),
 * asked of the platform (Slack `users.info`) and cached per process with a TTL. Fail-open: a lookup
 * that fails or is slow leaves the id as the name, and the message goes on.
 */
export class SenderNames {
  private readonly cache = new Map<string, { names: UserNames | undefined; until: number }>();
  /** Lookups under way: a burst from a new sender asks the platform once, not once per message. */
  private readonly asking = new Map<string, Promise<UserNames | undefined>>();
  private readonly options: SenderNamesOptions;

  constructor(
    private readonly clients: ReadonlyMap<string, PlatformClient>,
    private readonly logger: Logger,
    options: Partial<SenderNamesOptions> = {},
  ) {
    this.options = { ...DEFAULTS, ...options };
  }

  /** `workspaceId`: the sender's workspace, whose token asks where it has its own (Slack teams). */
  async resolve(thread: string, sender: Sender, workspaceId?: string): Promise<Sender> {
    // A name the event carried is the platform's own word; only a bare id is looked up.
    if (sender.name !== sender.id || sender.isBot) return sender;
    const platform = platformOfThread(thread);
    const client = this.clients.get(platform);
    if (client?.userNames === undefined) return sender;
    const key = `${platform}:${workspaceId ?? ''}:${sender.id}`;
    const entry = this.cache.get(key);
    const names =
      entry !== undefined && entry.until > Date.now()
        ? entry.names
        : await this.ask(key, client, platform, sender.id, workspaceId);
    return names === undefined ? sender : { ...sender, ...names };
  }

  private ask(
    key: string,
    client: PlatformClient,
    platform: string,
    id: string,
    workspaceId: string | undefined,
  ): Promise<UserNames | undefined> {
    let answer = this.asking.get(key);
    if (answer === undefined) {
      answer = this.lookUp(client, platform, id, workspaceId).then((names) => {
        const ttl = names ? this.options.ttlMs : this.options.failureTtlMs;
        if (this.cache.size >= this.options.maxEntries) this.cache.clear();
        this.cache.set(key, { names, until: Date.now() + ttl });
        this.asking.delete(key);
        return names;
      });
      this.asking.set(key, answer);
    }
    return answer;
  }

  private async lookUp(
    client: PlatformClient,
    platform: string,
    id: string,
    workspaceId: string | undefined,
  ): Promise<UserNames | undefined> {
    try {
      return await withinDeadline(client.userNames!(id, workspaceId), this.options.timeoutMs);
    } catch (error) {
      this.logger.warn(
        { err: error, platform, userId: id },
        'sender name not found; the id stands in for it',
      );
      return undefined;
    }
  }
}
