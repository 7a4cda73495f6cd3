import type {
  PermissionOption,
  PermissionOptionKind,
  RequestPermissionOutcome,
} from '@agentclientprotocol/sdk';

/** How the broker answers session/request_permission, since no person is there to ask. */
export type PermissionPolicy = 'reject' | 'allow-once' | 'allow-always';

/** Unattended, chat-driven turns must not grant tools silently; see docs/adr/0004-acp-sessions.md. */
export const DEFAULT_PERMISSION_POLICY: PermissionPolicy = 'reject';

// Options in order of preference. A policy falls back to a narrower grant or to a refusal, never to a
// broader grant than it names (allow-once never picks allow_always).
const PREFERENCES: Record<PermissionPolicy, readonly PermissionOptionKind[]> = {
  reject: ['reject_once', 'reject_always'],
  'allow-once': ['allow_once', 'reject_once', 'reject_always'],
  'allow-always': ['allow_always', 'allow_once', 'reject_once', 'reject_always'],
};

/** Every policy, for configuration to validate against. */
export const PERMISSION_POLICIES = Object.keys(PREFERENCES) as readonly PermissionPolicy[];

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
  return { outcome: 'cancelled' };
}
