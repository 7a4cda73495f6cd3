import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';

export type { AgentFeatures } from './features.js';
export type { AgentScript } from './script.js';
export type { HistoryEntry, SessionRecord } from './session-store.js';

export interface AgentCommand {
  command: string;
  args: string[];
}

/**
 * How to start the built-in agent: this Node binary with the tsx loader, so it runs from TypeScript
 * sources with no build step. Paths are absolute, so the command works from any cwd.
 */
export function builtInAgentCommand(): AgentCommand {
  const loader = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
  const main = fileURLToPath(new URL('./main.ts', import.meta.url));
  return { command: process.execPath, args: ['--import', loader, main] };
}
