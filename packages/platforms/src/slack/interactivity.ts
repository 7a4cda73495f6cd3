import { readApprovalButton } from '../approval-buttons.js';
import { type Inbound, InvalidWebhookError } from '../inbound.js';
import { ignored } from '../inbound-message.js';
import { readJsonBody } from '../json-body.js';
import { SlackFormAdapter } from './signed-form.js';

/**
 * Slack's interactivity endpoint: a form whose `payload` field is the interaction's JSON, signed as
 * events are. Ours are `block_actions` on the buttons of permission requests; Slack wants a bare 200,
 * so what the clicker is told goes to them as an ephemeral message instead.
 */
export class SlackInteractivityAdapter extends SlackFormAdapter {
  protected parseForm(form: URLSearchParams): Inbound {
    const payload = form.get('payload');
    if (payload === null) throw new InvalidWebhookError('the interaction has no payload field');
    const interaction = readJsonBody(Buffer.from(payload));
    const type = interaction.string('type');
    if (type !== 'block_actions') return ignored(`slack ${type} interaction`);
    const [action] = interaction.objects('actions');
    const button = readApprovalButton(action?.optionalString('value') ?? '');
    if (action === undefined || button === undefined)
      return ignored('slack action on a button that is not ours');
    const container = interaction.object('container');
    const user = interaction.object('user');
    const threadId = container.optionalString('thread_ts');
    // `||`: an empty team id is as good as none.
    const workspaceId = interaction.optionalObject('team')?.optionalString('id') || undefined;
    return {
      kind: 'approval',
      approvalId: button.id,
      option: button.option,
      userId: user.nonEmptyString('id'),
      userName: user.optionalString('username') ?? user.optionalString('name') ?? user.string('id'),
      ref: {
        platform: 'slack',
        channelId: container.nonEmptyString('channel_id'),
        ...(threadId === undefined ? {} : { threadId }),
        messageId: container.nonEmptyString('message_ts'),
        ...(workspaceId === undefined ? {} : { workspaceId }),
      },
      idempotencyKey: `slack:action:${action.nonEmptyString('action_ts')}`,
      privately: false,
      respond: () => ({}),
    };
  }
}
