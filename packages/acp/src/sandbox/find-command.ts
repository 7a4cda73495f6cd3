import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { AgentStartError } from '../errors.js';

/**
 * Fails as a spawn of a missing command would (AgentStartError caused by ENOENT) when `command` is
 * neither an executable path nor found on `path`. A sandbox is spawned in the agent's place and would
 * only report the agent's absence in its own words, after the start.
 */
export function assertCommandExists(command: string, path = ''): void {
  const candidates = command.includes('/')
    ? [command]
    : path
        .split(delimiter)
        .filter((dir) => dir !== '')
        .map((dir) => join(dir, command));
  for (const candidate of candidates) {
    try {
      accessSync(candidate, constants.X_OK);
      return;
    } catch {
      // Not this one.
    }
  }
  const cause = Object.assign(new Error(`spawn ${command} ENOENT`), { code: 'ENOENT' });
  throw new AgentStartError(command, cause.message, { cause });
}
