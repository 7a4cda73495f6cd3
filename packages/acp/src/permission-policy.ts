import type {
  PermissionOption,
  PermissionOptionKind,
  RequestPermissionOutcome,
  ToolKind,
} from '@agentclientprotocol/sdk';

/**
 * How the broker answers session/request_permission. `allow` is openab's order: `allow_always`, then
 * `allow_once`, then the first option that is not a refusal. `ask` puts the request to the people in
 * the thread (docs/adr/0056); where nobody can be asked, it refuses as `reject` does.
 */
export type PermissionPolicy = 'reject' | 'allow-once' | 'allow-always' | 'allow' | 'ask';

/**
 * Coding agents ask before every edit and command; refusing them all makes the agent useless, and a
 * grant the agent remembers (`allow_always`) would outlive a later change of policy. See
 * docs/adr/0018-coding-agent-sessions.md.
 */
export const DEFAULT_PERMISSION_POLICY: PermissionPolicy = 'allow-once';

/** The tool kinds of the ACP schema; a request without one is `other`. */
export const TOOL_KINDS: readonly ToolKind[] = [
  'read',
  'edit',
  'delete',
  'move',
  'search',
  'execute',
  'think',
  'fetch',
  'switch_mode',
  'other',
];

/** The policy for requests of each tool kind; kinds without a rule follow `policy`. */
export interface PermissionRules {
  policy: PermissionPolicy;
  byKind?: Readonly<Partial<Record<ToolKind, PermissionPolicy>>>;
}

const REJECTIONS: readonly PermissionOptionKind[] = ['reject_once', 'reject_always'];

// Options in order of preference. A policy falls back to a narrower grant or to a refusal, never to a
// broader grant than it names (allow-once never picks allow_always). `allow` never picks a refusal.
const PREFERENCES: Record<PermissionPolicy, readonly PermissionOptionKind[]> = {
  reject: REJECTIONS,
  'allow-once': ['allow_once', ...REJECTIONS],
  'allow-always': ['allow_always', 'allow_once', ...REJECTIONS],
  allow: ['allow_always', 'allow_once'],
  ask: REJECTIONS,
};

/** Every policy, for configuration to validate against. */
export const PERMISSION_POLICIES = Object.keys(PREFERENCES) as readonly PermissionPolicy[];

/** The policy that answers a request for a tool of this kind. */
export function policyFor(rules: PermissionRules, kind: ToolKind | null | undefined): PermissionPolicy {
  return rules.byKind?.[kind ?? 'other'] ?? rules.policy;
}

/** Picks the outcome for one request; a turn being cancelled always answers `cancelled` (ACP). */
export function choosePermission(
  policy: PermissionPolicy,
  options: readonly PermissionOption[],
  cancelling: boolean,
): RequestPermissionOutcome {
  if (cancelling) return { outcome: 'cancelled' };
  for (const kind of PREFERENCES[policy]) {
    const option = options.find((candidate) => candidate.kind === kind);
    if (option) return { outcome: 'selected', optionId: option.optionId };
  }
  // openab: any option that is not a refusal (a kind newer than this code) before giving up.
  const other = policy === 'allow' && options.find((option) => !REJECTIONS.includes(option.kind));
  return other ? { outcome: 'selected', optionId: other.optionId } : { outcome: 'cancelled' };
}
