import { parseArgs } from 'node:util';
import { ConfigError } from '@tributary/config';
import { runWorkerCommand } from './worker-command.js';

const USAGE = `usage: tributary <command>

commands:
  worker    run turns: claim threads, drive the ACP agent, deliver replies

Configuration comes from environment variables (see README).`;

const { positionals, values } = parseArgs({
  allowPositionals: true,
  strict: false,
  options: { help: { type: 'boolean', short: 'h' } },
});

const commands: Record<string, () => Promise<void>> = { worker: runWorkerCommand };
const command = positionals[0];
if (values.help || !command) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(command || values.help ? 0 : 2);
}
const run = commands[command];
if (!run) {
  process.stderr.write(`tributary: unknown command '${command}'\n\n${USAGE}\n`);
  process.exit(2);
}
try {
  await run();
} catch (error) {
  const what = error instanceof ConfigError ? `configuration error: ${error.message}` : String(error);
  process.stderr.write(`tributary ${command}: ${what}\n`);
  process.exit(1);
}
