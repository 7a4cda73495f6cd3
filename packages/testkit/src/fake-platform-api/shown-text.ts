import { readTelegramHtml } from './telegram-html.js';
import type { FakeApiCall } from './types.js';

/**
 * What a post or edit the fake received shows people, as the platform renders it: Slack's text with
 * its three escapes read back, Telegram's HTML read as Telegram reads it, Discord's content, a
 * gateway reply's text. Undefined for a call that carries no message text.
 */
export function shownText(call: Pick<FakeApiCall, 'platform' | 'body'>): string | undefined {
  const body = (call.body ?? {}) as { text?: unknown; content?: unknown; parse_mode?: unknown };
  switch (call.platform) {
    case 'slack':
      return typeof body.text === 'string'
        ? body.text.replace(
            /&(lt|gt|amp);/g,
            (_, name: string) => ({ lt: '<', gt: '>', amp: '&' })[name] ?? '',
          )
        : undefined;
    case 'telegram': {
      if (typeof body.text !== 'string') return undefined;
      if (body.parse_mode !== 'HTML') return body.text;
      const reading = readTelegramHtml(body.text);
      return reading.ok ? reading.text : undefined;
    }
    case 'discord':
      return typeof body.content === 'string' ? body.content : undefined;
    case 'gateway': {
      const text = (body.content as { text?: unknown } | undefined)?.text;
      return typeof text === 'string' ? text : undefined;
    }
  }
}
