import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError } from './config-error.js';
import { type Env, readOptional } from './env-readers.js';

const VARIABLE = 'SLACK_TEAM_TOKENS_DIR';
/** A workspace (`T…`), as events name it; an Enterprise Grid org-wide install (`E…`) is not supported. */
const TEAM_ID = /^T[A-Z0-9]{2,20}$/;

/**
 * SLACK_TEAM_TOKENS_DIR: a folder (a Kubernetes Secret mounted as a volume) with one file per Slack team
 * the deployment answers with a token of its own, named by the team id and holding its bot token
 * (docs/adr/0061). Names starting with `.` are the volume's own bookkeeping and are skipped; any other
 * name that is not a team id, or a file without a token, stops the start with an error naming it.
 */
export function readTeamTokens(env: Env): ReadonlyMap<string, string> | undefined {
  const dir = readOptional(env, VARIABLE);
  if (dir === undefined) return undefined;
  let names: string[];
  try {
    names = readdirSync(dir).filter((name) => !name.startsWith('.'));
  } catch (error) {
    throw new ConfigError(VARIABLE, `cannot read the folder ${dir}: ${(error as Error).message}`);
  }
  const tokens = new Map<string, string>();
  for (const name of names.sort()) {
    const token = readToken(join(dir, name), name);
    if (token === undefined) continue;
    if (!TEAM_ID.test(name)) {
      throw new ConfigError(VARIABLE, `${name} is not a Slack team id (T…); name each file by its team`);
    }
    if (token === '' || /\s/.test(token)) {
      throw new ConfigError(VARIABLE, `${name} must hold that team's bot token (xoxb-…) and nothing else`);
    }
    tokens.set(name, token);
  }
  if (tokens.size === 0) throw new ConfigError(VARIABLE, `${dir} holds no team's token; unset it or add one`);
  return tokens;
}

/** A file's content, trimmed; undefined for what is not a file (a folder of the volume's own). */
function readToken(path: string, name: string): string | undefined {
  try {
    return statSync(path).isFile() ? readFileSync(path, 'utf8').trim() : undefined;
  } catch (error) {
    throw new ConfigError(VARIABLE, `cannot read ${name}: ${(error as Error).message}`);
  }
}
