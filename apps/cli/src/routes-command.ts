import { readFile } from 'node:fs/promises';
import { RouteTable } from '@tributary/config';
import { type Command, parseCommandArgs, UsageError } from './command-line.js';

const say = (line = '') => process.stdout.write(`${line}\n`);

/**
 * `tributary routes check FILE [--platform P [--workspace W] --channel C]`: reads a route table as
 * ingress would, says what it holds or where it is wrong, and which route a place takes.
 */
export const routesCommand: Command = {
  async run(argv) {
    const { values, positionals } = parseCommandArgs(
      argv,
      { platform: { type: 'string' }, workspace: { type: 'string' }, channel: { type: 'string' } },
      true,
    );
    const [what, path, ...rest] = positionals;
    if (what !== 'check')
      throw new UsageError(what === undefined ? 'say what: check FILE' : `unknown '${what}'`);
    if (path === undefined) throw new UsageError('check needs the route file');
    if (rest.length > 0) throw new UsageError(`unexpected argument '${rest[0]}'`);
    if ((values.platform === undefined) !== (values.channel === undefined)) {
      throw new UsageError('--platform and --channel go together');
    }
    const table = RouteTable.parse(await readFile(path, 'utf8'), path);
    const names = table.names;
    say(
      `${path}: ${names.length} route${names.length === 1 ? '' : 's'}${names.length > 0 ? `: ${names.join(', ')}` : ''}`,
    );
    if (values.platform === undefined || values.channel === undefined) return;
    const { route, profile } = table.resolve({
      platform: values.platform,
      workspaceId: values.workspace,
      channelId: values.channel,
    });
    say(`${values.platform}${values.workspace ? ` ${values.workspace}` : ''} ${values.channel} → ${route}`);
    say(JSON.stringify(profile, null, 2));
  },
};
