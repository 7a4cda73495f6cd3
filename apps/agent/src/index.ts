import { type NodeEntryCommand, nodeEntryCommand } from '@tributary/acp';

export { isBrokerBlock } from './broker-blocks.js';
export type { AgentFeatures } from './features.js';
export type { AgentScript } from './script.js';
export { type HistoryEntry, readStoredSessions, type SessionRecord } from './session-log.js';

/** How to start the built-in agent. */
export function builtInAgentCommand(): NodeEntryCommand {
  return nodeEntryCommand(import.meta.url, './main.ts');
}
