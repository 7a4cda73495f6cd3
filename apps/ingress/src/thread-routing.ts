import { type RoutePlace, type RouteTable, readThreadRoute, type ThreadRoute } from '@tributary/config';
import type { ThreadRoutes } from '@tributary/queue';
import type { Logger } from 'pino';

/**
 * Which route a thread takes (docs/adr/0058): the one recorded at its first accepted message, else the
 * one the route table in force gives its place now.
 */
export class ThreadRouting {
  constructor(
    private readonly records: Pick<ThreadRoutes, 'note' | 'of'>,
    /** The table in force: a reload replaces it. */
    private readonly table: () => RouteTable,
    private readonly logger: Logger,
  ) {}

  async of(thread: string, place: RoutePlace): Promise<ThreadRoute> {
    return (await this.recorded(thread)) ?? this.table().resolve(place);
  }

  /**
   * The thread's recorded route; undefined for a thread without one. A record that cannot be read is
   * said at warn and taken as none, so the table decides again rather than the message being lost.
   */
  async recorded(thread: string): Promise<ThreadRoute | undefined> {
    const record = await this.records.of(thread);
    if (record === undefined) return undefined;
    try {
      return readThreadRoute(record);
    } catch (error) {
      this.logger.warn(
        { err: error, thread },
        "thread's route record unreadable; the route table decides again",
      );
      return undefined;
    }
  }

  /**
   * Records the route with the thread unless it has one, and renews the record. The default route is
   * recorded too: a thread that began on it keeps it when a later table routes its place elsewhere.
   */
  async note(thread: string, route: ThreadRoute): Promise<void> {
    await this.records.note(thread, JSON.stringify(route));
  }
}
