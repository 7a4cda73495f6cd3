import type { Reaction } from '../outbound.js';

/**
 * Bots may only react with emoji from Telegram's fixed reaction set, which has neither ✅ nor ⚠️;
 * these are the closest members of it.
 */
export const TELEGRAM_REACTIONS: Readonly<Record<Reaction, string>> = {
  accepted: '\u{1F440}', // 👀
  working: '\u{1F468}\u200D\u{1F4BB}', // 👨‍💻
  tool: '\u270D', // ✍
  'stall-soft': '\u{1F971}', // 🥱
  'stall-hard': '\u{1F634}', // 😴
  done: '\u{1F44D}', // 👍
  failed: '\u{1F494}', // 💔
};
