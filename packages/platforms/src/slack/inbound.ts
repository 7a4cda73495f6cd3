import type { Inbound, InboundAdapter, Verification, WebhookRequest } from '../inbound.js';
import { ignored } from '../inbound-message.js';
import { readJsonBody } from '../json-body.js';
import { escapeRegExp, stripMention, throughLast } from '../strip-mention.js';
import { requireSecret } from '../webhook-checks.js';
import { parseSlackChange } from './edit-events.js';
import { parseSlackEvent, type SlackSelf } from './message-event.js';
import { verifySlackRequest } from './signature.js';

export interface SlackInboundOptions extends SlackSelf {
  signingSecret: string;
}

/**
 * Slack Events API deliveries. Thread key `slack:<channel>:<thread_ts ?? ts>`, dedup key
 * `slack:<channel>:<ts>`; retries (`x-slack-retry-num`) carry the same event and so the same key.
 */
export class SlackInboundAdapter implements InboundAdapter {
  readonly platform = 'slack';

  constructor(private readonly options: SlackInboundOptions) {
    requireSecret(options.signingSecret, 'signingSecret');
  }

  verify(request: WebhookRequest): Verification {
    return verifySlackRequest(this.options.signingSecret, request);
  }

  parse(request: WebhookRequest): Inbound {
    const body = readJsonBody(request.rawBody);
    const type = body.string('type');
    if (type === 'url_verification')
      return { kind: 'handshake', body: { challenge: body.string('challenge') } };
    if (type !== 'event_callback') return ignored(`slack ${type} delivery`);
    const event = body.object('event');
    const parsed = parseSlackChange(event, this.options) ?? parseSlackEvent(event, this.options);
    // `||`: a team id is never empty; an empty one is as good as none.
    const workspaceId = body.optionalString('team_id') || undefined;
    if ((parsed.kind !== 'message' && parsed.kind !== 'edit') || workspaceId === undefined) return parsed;
    const { message } = parsed;
    return { ...parsed, message: { ...message, event: { ...message.event, workspaceId } } };
  }

  /** `<@U123>` and `<@U123|name>`. */
  stripSelfMention(text: string, selfId: string, selfName?: string): string {
    const mention = `<@${escapeRegExp(selfId)}(?:\\|[^>]*)?>`;
    return stripMention(text, mention, selfName, '', throughLast(text, '>'));
  }
}
