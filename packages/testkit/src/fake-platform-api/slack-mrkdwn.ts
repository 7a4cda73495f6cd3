/** A `<…>` sequence Slack acts on in a message's text. */
export interface SlackControl {
  kind: 'link' | 'mention';
  raw: string;
}

/**
 * What Slack reads as control sequences in mrkdwn: each `<…>` is a link (`<url>`, `<url|label>`) or a
 * mention (`<@U…>`, `<#C…>`, `<!here>`, `<!channel>`, `<!subteam^…>`, any `<!…>`). Only `<`, `>` and
 * `&` are special to Slack, so an escaped text has none but the links its writer meant.
 */
export function slackControls(text: string): SlackControl[] {
  return [...text.matchAll(/<([^<>]*)>/g)].map(([raw, inside = '']) => ({
    kind: /^[@#!]/.test(inside) ? 'mention' : 'link',
    raw,
  }));
}
