import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

/** What the benchmarks read of a post to the gateway (`openab.gateway.reply.v1`). */
export interface GatewayPost {
  /** `add_reaction` / `remove_reaction`; absent on a reply. */
  command?: string;
  /** The event id (`evt-…`) of the message a reply answers: the last of its batch. */
  reply_to?: string;
}

export interface GatewayStub {
  /** Where the fleet posts replies and reactions (GATEWAY_REPLY_URL). */
  replyUrl: string;
  /** Calls received so far: 👀 from ingress, progress reactions and replies from workers. */
  readonly posts: number;
  /** Resolves once no call has come for a moment: the calls a round set off are in. */
  settled(): Promise<void>;
  close(): void;
}

/**
 * The platform side of a benchmark fleet: a gateway that answers every call at once, counts them and,
 * when asked, hands each one's body to `onPost` (parsing costs the benchmark's own CPU, so only then).
 */
export async function startGatewayStub(onPost?: (post: GatewayPost) => void): Promise<GatewayStub> {
  let posts = 0;
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    if (onPost) request.on('data', (chunk: Buffer) => chunks.push(chunk));
    else request.resume();
    request.on('end', () => {
      posts++;
      if (onPost) onPost(JSON.parse(Buffer.concat(chunks).toString()) as GatewayPost);
      response.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    replyUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/reply`,
    get posts() {
      return posts;
    },
    async settled() {
      for (let seen = -1; seen !== posts; ) {
        seen = posts;
        await sleep(250);
      }
    },
    close: () => server.close(),
  };
}
