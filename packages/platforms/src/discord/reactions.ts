import type { Reaction } from '../outbound.js';

/** Discord reacts with any Unicode emoji, written as the emoji itself. */
export const DISCORD_REACTIONS: Readonly<Record<Reaction, string>> = {
  accepted: '\u{1F440}', // 👀
  working: '\u2699\uFE0F', // ⚙️
  tool: '\u{1F527}', // 🔧
  'stall-soft': '\u{1F971}', // 🥱
  'stall-hard': '\u{1F634}', // 😴
  done: '\u2705', // ✅
  failed: '\u26A0\uFE0F', // ⚠️
};
