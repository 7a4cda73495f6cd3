/** The emoji Telegram accepts in a bot's `ReactionTypeEmoji` (Bot API docs); anything else is REACTION_INVALID. */
export const TELEGRAM_ALLOWED_REACTIONS: ReadonlySet<string> = new Set(
  [
    '👍 👎 ❤ 🔥 🥰 👏 😁 🤔 🤯 😱 🤬 😢 🎉 🤩 🤮 💩 🙏 👌 🕊 🤡 🥱 🥴 😍 🐳 ❤\u200D🔥 🌚 🌭 💯 🤣 ⚡ 🍌 🏆',
    '💔 🤨 😐 🍓 🍾 💋 🖕 😈 😴 😭 🤓 👻 👨\u200D💻 👀 🎃 🙈 😇 😨 🤝 ✍ 🤗 🫡 🎅 🎄 ☃ 💅 🤪 🗿 🆒 💘 🙉',
    '🦄 😘 💊 🙊 😎 👾 🤷\u200D♂ 🤷 🤷\u200D♀ 😡',
  ]
    .join(' ')
    .split(' '),
);
