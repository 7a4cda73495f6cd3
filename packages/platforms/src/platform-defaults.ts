// What configuration needs of the platforms, in a module that loads none of their clients or parsers:
// the configuration package, and the CLI through it, read these without loading an SDK.

export const SLACK_API_URL = 'https://slack.com/api';
export const TELEGRAM_API_URL = 'https://api.telegram.org';
export const DISCORD_API_URL = 'https://discord.com/api/v10';

/** How long Telegram keeps an update it could not deliver: the default freshness window. */
export const TELEGRAM_MAX_AGE_MS = 24 * 60 * 60 * 1000;
