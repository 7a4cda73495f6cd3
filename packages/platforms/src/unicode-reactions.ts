import type { Reaction } from './outbound.js';

/**
 * Reactions as Unicode emoji, written as the emoji itself: what Discord takes, and what an openab
 * gateway relays to the platform behind it.
 */
export const UNICODE_REACTIONS: Readonly<Record<Reaction, string>> = {
  accepted: '\u{1F440}', // 👀
  working: '\u2699\uFE0F', // ⚙️
  tool: '\u{1F527}', // 🔧
  'stall-soft': '\u{1F971}', // 🥱
  'stall-hard': '\u{1F634}', // 😴
  done: '\u2705', // ✅
  failed: '\u26A0\uFE0F', // ⚠️
};
