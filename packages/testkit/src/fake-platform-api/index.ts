export { startFakePlatformApi } from './server.js';
export type {
  FakeApiCall,
  FakeBots,
  FakeFailure,
  FakeFile,
  FakePlatform,
  FakePlatformApi,
  FakePlatformApiOptions,
  FakeTokens,
  SeededFile,
  SeededMessage,
  SeededUser,
  WaitForCallsOptions,
} from './types.js';
