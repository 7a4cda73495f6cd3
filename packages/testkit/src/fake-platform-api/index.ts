export { startFakePlatformApi } from './server.js';
export type {
  FakeApiCall,
  FakeFailure,
  FakePlatform,
  FakePlatformApi,
  FakePlatformApiOptions,
  FakeTokens,
  SeededMessage,
  WaitForCallsOptions,
} from './types.js';
