import type { Reaction } from '../outbound.js';

/** Slack names emoji by short name, without colons. */
export const SLACK_REACTIONS: Readonly<Record<Reaction, string>> = {
  accepted: 'eyes',
  working: 'gear',
  tool: 'hammer_and_wrench',
  'stall-soft': 'yawning_face',
  'stall-hard': 'sleeping',
  done: 'white_check_mark',
  failed: 'warning',
};
