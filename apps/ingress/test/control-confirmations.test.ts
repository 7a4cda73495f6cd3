import { GatewayClient } from '@tributary/platforms';
import { type FakePlatformApi, startFakePlatformApi } from '@tributary/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  gatewayEvent,
  hmacHeaders,
  type IngressHarness,
  SECRETS,
  startIngressHarness,
} from './ingress-fixture.js';

let api: FakePlatformApi;
let h: IngressHarness;
beforeAll(async () => {
  api = await startFakePlatformApi({ gatewaySecret: SECRETS.GATEWAY_SECRET });
  const gateway = new GatewayClient({ replyUrl: api.urls.gatewayReply, secret: SECRETS.GATEWAY_SECRET });
  h = await startIngressHarness({ clients: new Map([['gateway', gateway]]) });
});
afterAll(async () => {
  await h.close();
  await api.close();
});

describe('control command confirmations', () => {
  it('go back through the gateway, naming the delivery that asked', async () => {
    const body = gatewayEvent('/cancel');
    const answer = await h.post('/webhooks/gateway', body, hmacHeaders(SECRETS.GATEWAY_SECRET, body));
    expect(answer.body).toMatchObject({ outcome: 'control', command: 'cancel' });
    const [reply] = await api.waitForCalls((c) => c.platform === 'gateway' && c.method === 'reply');
    const sent = JSON.parse(body) as { event_id: string; message_id: string; platform: string };
    expect(reply!.body).toMatchObject({
      schema: 'openab.gateway.reply.v1',
      reply_to: sent.event_id,
      platform: sent.platform,
      quote_message_id: sent.message_id,
      content: { type: 'text', text: 'No turn is running; messages waiting are kept.' },
    });
  });
});
