import type { TurnEvent } from '@tributary/acp';

const MAX_STATUS = 120;

function clip(line: string): string {
  return line.length > MAX_STATUS ? `${line.slice(0, MAX_STATUS - 1)}…` : line;
}

/**
 * The status line an update deserves, if any: a tool that starts running, or a plan (its entries done
 * out of all, and the one in progress). Other updates leave the status as it was.
 */
export function progressOf(event: TurnEvent): string | undefined {
  const line = statusOf(event);
  return line === undefined ? undefined : clip(line);
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
