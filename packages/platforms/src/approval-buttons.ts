/**
 * What a button of a permission request carries back: the request's id and the option's place, as
 * `ap:<id>:<index>`. Short enough for Telegram's 64 bytes of callback data.
 */
export function approvalButton(id: string, option: number): string {
  return `ap:${id}:${option}`;
}

/** The request and option a button names; undefined for data that is no approval button. */
export function readApprovalButton(data: string): { id: string; option: number } | undefined {
  const match = /^ap:([\w-]{1,32}):(\d{1,2})$/.exec(data);
  return match ? { id: match[1]!, option: Number(match[2]) } : undefined;
}

/** A permission request as the people of a thread are shown it. */
export interface ApprovalPrompt {
  id: string;
  /** Markdown: what the agent asks to do, and who may answer. */
  text: string;
  /** The agent's options, in its order; a button's index is its place here. */
  options: readonly { name: string; kind: string }[];
}

/** A refusal's kind makes a red button, a grant's a green one, where the platform colours them. */
export function isRefusal(kind: string): boolean {
  return kind.startsWith('reject');
}
