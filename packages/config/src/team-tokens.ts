import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError } from './config-error.js';
import { type Env, readOptional } from './env-readers.js';

const VARIABLE = 'SLACK_TEAM_TOKENS_DIR';
/** A workspace (`T…`) or, for an organisation-wide install, an Enterprise Grid org (`E…`). */
const TEAM_ID = /^[TE][A-Z0-9]{2,20}$/;

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
    const path = join(dir, name);
    if (!statSync(path).isFile()) continue;
    if (!TEAM_ID.test(name)) {
      throw new ConfigError(
        VARIABLE,
        `${name} is not a Slack team id (T… or E…); name each file by its team`,
      );
    }
    const token = readFileSync(path, 'utf8').trim();
    if (token === '' || /\s/.test(token)) {
      throw new ConfigError(VARIABLE, `${name} must hold that team's bot token (xoxb-…) and nothing else`);
    }
    tokens.set(name, token);
  }
  if (tokens.size === 0) throw new ConfigError(VARIABLE, `${dir} holds no team's token; unset it or add one`);
  return tokens;
}
