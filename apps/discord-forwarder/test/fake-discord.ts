import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type WebSocket, WebSocketServer } from 'ws';

export const BOT_USER = { id: '900000000000000001', username: 'tributary', discriminator: '0', bot: true };

/** Short enough that every test sees the client heartbeat, so a missing ACK would show. */
const HEARTBEAT_INTERVAL_MS = 300;

interface Session {
  socket: WebSocket;
  sequence: number;
  ready: boolean;
}

export interface Identify {
  token: string;
  intents: number;
  shard: [number, number];
}

/**
 * Discord as far as a Gateway client sees it, on one loopback port: the REST route that says where the
 * Gateway is (`<apiUrl>/v10/gateway/bot`) and the Gateway websocket itself (`gatewayUrl`).
 */
export class FakeDiscord {
  readonly identifies: Identify[] = [];
  readonly restAuthorizations: (string | undefined)[] = [];
  /** Close codes our clients sent when they went away. */
  readonly clientCloseCodes: number[] = [];
  heartbeatsAcked = 0;
  /** When set, the Gateway answers IDENTIFY by closing with this code instead of READY. */
  refuseIdentifyWith: number | undefined;
  readonly #sessions = new Set<Session>();

  private constructor(
    private readonly http: Server,
    private readonly gateway: WebSocketServer,
    readonly token: string,
  ) {
    gateway.on('connection', (socket) => this.#accept(socket));
  }

  static async start(token: string): Promise<FakeDiscord> {
    const http = createServer();
    const gateway = new WebSocketServer({ server: http, path: '/gateway' });
    const discord = new FakeDiscord(http, gateway, token);
    http.on('request', (request, response) => discord.#rest(request, response));
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
    return discord;
  }

  get #origin(): string {
    return `127.0.0.1:${(this.http.address() as AddressInfo).port}`;
  }

  get apiUrl(): string {
    return `http://${this.#origin}/api`;
  }

  get gatewayUrl(): string {
    return `ws://${this.#origin}/gateway`;
  }

  /** Sessions that got READY and are still open. */
  get readySessions(): number {
    return [...this.#sessions].filter((session) => session.ready).length;
  }

  /** Sends a dispatch (op 0) to every ready session. */
  dispatch(event: string, data: unknown): void {
    for (const session of this.#sessions) {
      if (session.ready) this.#send(session, { op: 0, t: event, s: ++session.sequence, d: data });
    }
  }

  async stop(): Promise<void> {
    for (const session of this.#sessions) session.socket.terminate();
    await new Promise<void>((resolve) => this.gateway.close(() => resolve()));
    this.http.closeAllConnections();
    await new Promise<void>((resolve) => this.http.close(() => resolve()));
  }

  #rest(request: IncomingMessage, response: ServerResponse): void {
    if (request.method !== 'GET' || request.url !== '/api/v10/gateway/bot') {
      response
        .writeHead(404, { 'content-type': 'application/json' })
        .end('{"message":"404: Not Found","code":0}');
      return;
    }
    this.restAuthorizations.push(request.headers.authorization);
    if (request.headers.authorization !== `Bot ${this.token}`) {
      response
        .writeHead(401, { 'content-type': 'application/json' })
        .end('{"message":"401: Unauthorized","code":0}');
      return;
    }
    const info = {
      url: this.gatewayUrl,
      shards: 1,
      session_start_limit: { total: 1000, remaining: 999, reset_after: 0, max_concurrency: 1 },
    };
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(info));
  }

  #accept(socket: WebSocket): void {
    const session: Session = { socket, sequence: 0, ready: false };
    this.#sessions.add(session);
    socket.on('close', (code) => {
      this.#sessions.delete(session);
      this.clientCloseCodes.push(code);
    });
    socket.on('message', (raw) => this.#receive(session, JSON.parse(raw.toString())));
    this.#send(session, { op: 10, d: { heartbeat_interval: HEARTBEAT_INTERVAL_MS } });
  }

  #receive(session: Session, payload: { op: number; d: unknown }): void {
    if (payload.op === 1) {
      this.heartbeatsAcked++;
      this.#send(session, { op: 11 });
    } else if (payload.op === 2) {
      const identify = payload.d as Identify;
      this.identifies.push({ token: identify.token, intents: identify.intents, shard: identify.shard });
      if (this.refuseIdentifyWith !== undefined) {
        session.socket.close(this.refuseIdentifyWith, 'refused');
      } else if (identify.token !== this.token) {
        session.socket.close(4004, 'Authentication failed.');
      } else {
        session.ready = true;
        this.#send(session, {
          op: 0,
          t: 'READY',
          s: ++session.sequence,
          d: {
            v: 10,
            user: BOT_USER,
            guilds: [],
            session_id: `session-${this.identifies.length}`,
            resume_gateway_url: this.gatewayUrl,
            shard: identify.shard,
            application: { id: BOT_USER.id, flags: 0 },
          },
        });
      }
    }
  }

  #send(session: Session, payload: unknown): void {
    session.socket.send(JSON.stringify(payload));
  }
}
