/** Where an approver entry may name a group, and the groups it may name: Telegram keeps only its admins. */
const APPROVER_GROUPS: Record<string, RegExp> = { slack: /^S[A-Z0-9]+$/, telegram: /^admins$/ };

/**
 * What is wrong with an approver entry (APPROVERS, a route's `approvers`), or undefined: a group is
 * refused where the platform keeps none that a click could be checked against.
 */
export function approverProblem(entry: string): string | undefined {
  const [platform = '', kind, group] = entry.split(':');
  if (kind !== 'group' || APPROVER_GROUPS[platform]?.test(group ?? '')) return undefined;
  return `${JSON.stringify(entry)} names no group the platform keeps: use slack:group:<user group id> or telegram:group:admins`;
}
