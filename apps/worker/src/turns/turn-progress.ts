import type { TurnEvent } from '@tributary/acp';
import type { SecretScrubber } from '@tributary/observability';

const MAX_STATUS = 120;

function clip(line: string): string {
  return line.length > MAX_STATUS ? `${line.slice(0, MAX_STATUS - 1)}…` : line;
}

/**
 * The status line an update deserves, if any: a tool that starts running, or a plan (its entries done
 * out of all, and the one in progress). Other updates leave the status as it was. The agent chose the
 * titles and entries, so the line is scrubbed of the worker's secrets, before it is clipped: a clip
 * could leave a secret's start no longer recognisable.
 */
export function progressOf(event: TurnEvent, secrets: Pick<SecretScrubber, 'scrub'>): string | undefined {
  const line = statusOf(event);
  return line === undefined ? undefined : clip(secrets.scrub(line));
}

function statusOf(event: TurnEvent): string | undefined {
  switch (event.kind) {
    case 'tool_call':
      return event.toolCall.status === 'completed' || event.toolCall.status === 'failed'
        ? undefined
        : `running: ${event.toolCall.title}`;
    case 'tool_call_update': {
      const { status, title } = event.toolCallUpdate;
      return status === 'in_progress' && title ? `running: ${title}` : undefined;
    }
    case 'plan': {
      const done = event.entries.filter((entry) => entry.status === 'completed').length;
      const current = event.entries.find((entry) => entry.status === 'in_progress');
      const step = current ? `, now: ${current.content}` : '';
      return `plan: ${done}/${event.entries.length} done${step}`;
    }
    default:
      return undefined;
  }
}
