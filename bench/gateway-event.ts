import { signedRequestHeaders } from '@tributary/platforms';

/** The secret the benchmarks' ingress processes verify gateway webhooks with. */
export const BENCH_GATEWAY_SECRET = 'bench-gateway-secret';

/** One chat message as the generic gateway posts it (`openab.gateway.event.v1`), from one user. */
export function gatewayEventBody({ id, thread, text }: { id: string; thread: string; text: string }): string {
  return JSON.stringify({
    schema: 'openab.gateway.event.v1',
    event_id: `evt-${id}`,
    timestamp: new Date().toISOString(),
    platform: 'bench',
    event_type: 'message',
    channel: { id: 'room', type: 'group', thread_id: thread },
    sender: { id: 'ualice', name: 'alice', display_name: 'Alice', is_bot: false },
    content: { type: 'text', text },
    mentions: [],
    message_id: `m-${id}`,
  });
}

/** The request that delivers `body` to ingress's gateway route, signed with BENCH_GATEWAY_SECRET. */
export function gatewayWebhook(body: string) {
  return {
    path: '/webhooks/gateway',
    headers: { 'content-type': 'application/json', ...signedRequestHeaders(BENCH_GATEWAY_SECRET, body) },
    body,
  };
}
