import { createHmac } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Answer {
  status: number;
  headers?: Record<string, string>;
}

/** Decides the answer to one POST; `attempt` counts deliveries of this exact body, from 1. */
export type Responder = (forward: Forward, attempt: number) => Answer | Promise<Answer>;

export interface Forward {
  body: string;
  /** The parsed body. */
  json: { schema: string; message: { id: string; channel_id: string }; channel: unknown };
  signature: string | undefined;
  /** `x-tributary-timestamp`, unix seconds. */
  timestamp: string | undefined;
}

/**
 * Stands in for ingress at `/webhooks/discord/forwarded`: checks the signature as ingress does (its own
 * HMAC, not the forwarder's helper), records every attempt, and answers as the test says.
 */
export class IngressReceiver {
  /** Every POST to the forward route, in arrival order. */
  readonly attempts: Forward[] = [];
  /** Forwards answered 2xx, in order. */
  readonly accepted: Forward[] = [];
  respond: Responder = () => ({ status: 200 });
  /** The most requests that were open at the same time. */
  peakConcurrency = 0;
  #open = 0;
  readonly #seen = new Map<string, number>();

  private constructor(
    private readonly server: Server,
    private readonly secret: string,
  ) {
    server.on('request', (request, response) => void this.#handle(request, response));
  }

  static async start(secret: string): Promise<IngressReceiver> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return new IngressReceiver(server, secret);
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Message ids of the accepted forwards, in order. */
  acceptedIds(): string[] {
    return this.accepted.map((forward) => forward.json.message.id);
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  async #handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks);
    if (request.method !== 'POST' || request.url !== '/webhooks/discord/forwarded') {
      response.writeHead(404).end();
      return;
    }
    const signature = request.headers['x-tributary-signature'];
    const timestamp = request.headers['x-tributary-timestamp'];
    const expected = `v1=${createHmac('sha256', this.secret).update(`v1:${timestamp}:`).update(raw).digest('hex')}`;
    const fresh = Math.abs(Date.now() / 1000 - Number(timestamp)) <= 300;
    if (typeof timestamp !== 'string' || !fresh || signature !== expected) {
      response.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"bad signature"}');
      return;
    }
    const body = raw.toString('utf8');
    const forward: Forward = { body, json: JSON.parse(body), signature, timestamp };
    this.attempts.push(forward);
    const attempt = (this.#seen.get(body) ?? 0) + 1;
    this.#seen.set(body, attempt);
    this.#open++;
    this.peakConcurrency = Math.max(this.peakConcurrency, this.#open);
    let answer: Answer;
    try {
      answer = await this.respond(forward, attempt);
    } finally {
      this.#open--;
    }
    if (answer.status >= 200 && answer.status < 300) this.accepted.push(forward);
    response
      .writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers })
      .end(answer.status < 300 ? '{"ok":true}' : '{"error":"as the test said"}');
  }
}
