import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';

export type { AgentFeatures } from './features.js';
export type { AgentScript } from './script.js';
export { type HistoryEntry, readStoredSessions, type SessionRecord } from './session-log.js';

export interface AgentCommand {
  command: string;
  args: string[];
}

/**
 * How to start the built-in agent: this Node binary on its main module, with the tsx loader when this
 * module runs from TypeScript sources (no build step), without it when it runs compiled to JavaScript,
 * as in the image (infra/docker/compile-js.mjs). Paths are absolute, so the command works from any cwd.
 */
export function builtInAgentCommand(): AgentCommand {
  if (import.meta.url.endsWith('.js')) {
    return { command: process.execPath, args: [fileURLToPath(new URL('./main.js', import.meta.url))] };
  }
  const loader = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
  const main = fileURLToPath(new URL('./main.ts', import.meta.url));
  return { command: process.execPath, args: ['--import', loader, main] };
}
