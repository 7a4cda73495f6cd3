export { startFakePlatformApi } from './server.js';
export { shownText } from './shown-text.js';
export { type SlackControl, slackControls } from './slack-mrkdwn.js';
export { readTelegramHtml, type TelegramEntity, type TelegramHtmlReading } from './telegram-html.js';
export type {
  FakeApiCall,
  FakeBots,
  FakeFailure,
  FakeFile,
  FakePlatform,
  FakePlatformApi,
  FakePlatformApiOptions,
  FakeSlackTeam,
  FakeTokens,
  SeededFile,
  SeededMessage,
  SeededUser,
  WaitForCallsOptions,
} from './types.js';
export { FAKE_SLACK_TEAM } from './types.js';
