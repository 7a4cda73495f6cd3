import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** A process to start: its executable and arguments. */
export interface NodeEntryCommand {
  command: string;
  args: string[];
}

/**
 * How to run a Node entry module in a child process: this Node binary on the module, with the tsx
 * loader when the caller runs from TypeScript sources (no build step), without it when it runs
 * compiled to JavaScript, as in the image (infra/docker/compile-js.mjs). `module` names the entry
 * beside the caller, with a `.ts` extension; paths are absolute, so the command works from any cwd.
 */
export function nodeEntryCommand(caller: string, module: string): NodeEntryCommand {
  if (caller.endsWith('.js')) {
    return {
      command: process.execPath,
      args: [fileURLToPath(new URL(module.replace(/\.ts$/, '.js'), caller))],
    };
  }
  const loader = pathToFileURL(createRequire(caller).resolve('tsx')).href;
  return { command: process.execPath, args: ['--import', loader, fileURLToPath(new URL(module, caller))] };
}
