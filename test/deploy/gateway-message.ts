import { randomUUID } from 'node:crypto';
import { GATEWAY_EVENT_SCHEMA, type GatewayEvent, signedRequestHeaders } from '@tributary/platforms';
import type { FakeApiCall, FakePlatformApi } from '@tributary/testkit';

/**
 * Posts one signed openab.gateway.event.v1 to an ingress; resolves with its event id once ingress
 * answered with `outcome` (`accepted` for a message, `control` for a command such as /cancel).
 */
export async function postGatewayMessage(
  ingressUrl: string,
  secret: string,
  thread: string,
  text: string,
  outcome: 'accepted' | 'control' = 'accepted',
): Promise<string> {
  const event: GatewayEvent = {
    schema: GATEWAY_EVENT_SCHEMA,
    event_id: randomUUID(),
    timestamp: new Date().toISOString(),
    platform: 'telegram',
    event_type: 'message',
    channel: { id: 'deploy', type: 'group', thread_id: thread },
    sender: { id: 'u1', name: 'ada', display_name: 'Ada', is_bot: false },
    content: { type: 'text', text },
    mentions: [],
    message_id: randomUUID(),
  };
  const body = JSON.stringify(event);
  const response = await fetch(`${ingressUrl}/webhooks/gateway`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...signedRequestHeaders(secret, body) },
    body,
  });
  const answer = (await response.json()) as { outcome?: string };
  if (response.status !== 200 || answer.outcome !== outcome) {
    throw new Error(`ingress answered ${response.status} ${JSON.stringify(answer)}`);
  }
  return event.event_id;
}

/** The agent's reply to a message, as the worker posted it to the gateway reply URL. */
export async function replyTo(api: FakePlatformApi, eventId: string, timeoutMs: number): Promise<string> {
  const [call] = await api.waitForCalls(
    (c: FakeApiCall) => c.method === 'reply' && (c.body as { reply_to?: string }).reply_to === eventId,
    { timeoutMs },
  );
  return (call!.body as { content: { text: string } }).content.text;
}
