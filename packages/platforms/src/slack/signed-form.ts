import type { Inbound, InboundAdapter, Verification, WebhookRequest } from '../inbound.js';
import { requireSecret } from '../webhook-checks.js';
import { verifySlackRequest } from './signature.js';

export interface SlackFormOptions {
  signingSecret: string;
}

/**
 * What Slack posts as a form (slash commands, interactivity), signed as events are: verified with the
 * signing secret, read as form fields; each route says what its fields mean.
 */
export abstract class SlackFormAdapter implements InboundAdapter {
  readonly platform = 'slack';

  constructor(private readonly options: SlackFormOptions) {
    requireSecret(options.signingSecret, 'signingSecret');
  }

  verify(request: WebhookRequest): Verification {
    return verifySlackRequest(this.options.signingSecret, request);
  }

  parse(request: WebhookRequest): Inbound {
    return this.parseForm(new URLSearchParams(request.rawBody.toString('utf8')));
  }

  /** Forms carry no mentions of us. */
  stripSelfMention(text: string): string {
    return text;
  }

  protected abstract parseForm(form: URLSearchParams): Inbound;
}
