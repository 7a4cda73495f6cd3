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
  /**
   * The teams answered with tokens of their own (SLACK_TEAM_TOKENS_DIR), each with our bot's identity
   * there: their thread keys name the team (docs/adr/0061). Any other team is the deployment's own.
   */
  teams?: ReadonlyMap<string, SlackSelf>;
}

/**
 * Slack Events API deliveries. Thread key `slack:<channel>:<thread_ts ?? ts>` (`slack:<team>:…` for a
 * team of `teams`), dedup key `slack:<channel>:<ts>`; retries (`x-slack-retry-num`) carry the same event
 * and so the same key. The envelope's team travels with the message and its answers' address.
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
    // `||`: a team id is never empty; an empty one is as good as none.
    const workspaceId = body.optionalString('team_id') || undefined;
    const team = workspaceId === undefined ? undefined : this.options.teams?.get(workspaceId);
    const self = team ?? this.options;
    const keyTeam = team === undefined ? undefined : workspaceId;
    const parsed = parseSlackChange(event, self, keyTeam) ?? parseSlackEvent(event, self, keyTeam);
    return workspaceId === undefined ? parsed : inWorkspace(parsed, workspaceId);
  }

  /** `<@U123>` and `<@U123|name>`. */
  stripSelfMention(text: string, selfId: string, selfName?: string): string {
    const mention = `<@${escapeRegExp(selfId)}(?:\\|[^>]*)?>`;
    return stripMention(text, mention, selfName, '', throughLast(text, '>'));
  }
}

/** The team's id on the message and on its answers' address. */
function inWorkspace(parsed: Inbound, workspaceId: string): Inbound {
  switch (parsed.kind) {
    case 'message':
    case 'edit': {
      const { message } = parsed;
      const event = { ...message.event, workspaceId };
      return { ...parsed, message: { ...message, event, ref: { ...message.ref, workspaceId } } };
    }
    case 'delete':
      return { ...parsed, ref: { ...parsed.ref, workspaceId } };
    default:
      return parsed;
  }
}
