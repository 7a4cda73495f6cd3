import { toSlackMrkdwn } from '../format/slack-mrkdwn.js';
import { type Inbound, InvalidWebhookError } from '../inbound.js';
import { ignored } from '../inbound-message.js';
import { isThreadCommand } from '../thread-commands.js';
import { SlackFormAdapter } from './signed-form.js';

/**
 * Slack's slash commands (form-encoded, signed as events are). Each command may be its own (`/cancel`,
 * `/status`) or words after one of ours (`/tributary cancel`). Slack lets no app's command be used in a
 * thread, so a command names no thread: it acts on the invoker's latest conversation with us in the
 * channel. Its answer goes back in the HTTP response, seen by the invoker alone.
 */
export class SlackCommandsAdapter extends SlackFormAdapter {
  protected parseForm(form: URLSearchParams): Inbound {
    const field = (name: string) => {
      const value = form.get(name);
      if (value === null || value === '') throw new InvalidWebhookError(`the slash command has no ${name}`);
      return value;
    };
    const name = field('command').replace(/^\//, '');
    const words = (form.get('text') ?? '').trim().split(/\s+/).filter(Boolean);
    const command = isThreadCommand(name) ? name : words[0]?.toLowerCase();
    if (command === undefined || !isThreadCommand(command)) {
      return ignored(`slack command /${name}${words.length > 0 ? ` ${words[0]}` : ''}`);
    }
    const channelId = field('channel_id');
    const workspaceId = form.get('team_id') || undefined;
    return {
      kind: 'control',
      command,
      senderId: field('user_id'),
      // Slack gives a command's invocation no id of its own; its trigger is unique per invocation.
      idempotencyKey: `slack:${channelId}:command:${field('trigger_id')}`,
      ref: {
        platform: 'slack',
        channelId,
        messageId: field('trigger_id'),
        ...(workspaceId === undefined ? {} : { workspaceId }),
      },
      respond: (confirmation) => ({ response_type: 'ephemeral', text: toSlackMrkdwn(confirmation) }),
    };
  }
}
