import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';

export { isBrokerBlock } from './broker-blocks.js';
export type { AgentFeatures } from './features.js';
export type { AgentScript } from './script.js';
export { type HistoryEntry, readStoredSessions, type SessionRecord } from './session-log.js';

export interface AgentCommand {
  command: string;
  args: string[];
}

/**
 * How to run a Node entry module in a child process: this Node binary on the module, with the tsx
 * loader when the caller runs from TypeScript sources (no build step), without it when it runs
 * compiled to JavaScript, as in the image (infra/docker/compile-js.mjs). `module` names the entry
 * beside the caller, with a `.ts` extension; paths are absolute, so the command works from any cwd.
 */
export function nodeEntryCommand(caller: string, module: string): AgentCommand {
  if (caller.endsWith('.js')) {
    return {
      command: process.execPath,
      args: [fileURLToPath(new URL(module.replace(/\.ts$/, '.js'), caller))],
    };
  }
  const loader = pathToFileURL(createRequire(caller).resolve('tsx')).href;
  return { command: process.execPath, args: ['--import', loader, fileURLToPath(new URL(module, caller))] };
}

/** How to start the built-in agent. */
export function builtInAgentCommand(): AgentCommand {
  return nodeEntryCommand(import.meta.url, './main.ts');
}
