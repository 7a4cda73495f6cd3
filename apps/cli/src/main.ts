import { parseArgs } from 'node:util';
import { ConfigError } from '@tributary/config';
import { runDevCommand } from './dev-command.js';
import { runDiscordForwarderCommand } from './discord-forwarder-command.js';
import { DOCTOR_USAGE, runDoctorCommand } from './doctor-command.js';
import { runIngressCommand } from './ingress-command.js';
import { runSendCommand } from './send-command.js';
import { runWorkerCommand } from './worker-command.js';

const USAGE = `usage: tributary <command>

commands:
  dev                 run the whole stack locally: Redis, ingress, a worker, the built-in agent
  send "text" ...     post messages to the local stack and print the agent's replies
  ingress             serve the platform webhooks and queue each message
  worker              run turns: claim threads, drive the ACP agent, deliver replies
  discord-forwarder   hold the Discord Gateway connection and forward messages to ingress
  doctor              check that a worker could use the configured agent (tributary doctor --help)

Configuration comes from environment variables (see README).`;

const argv = process.argv.slice(2);
const { positionals, values } = parseArgs({
  args: argv,
  allowPositionals: true,
  strict: false,
  options: { help: { type: 'boolean', short: 'h' } },
});

const commands: Record<string, (rest: string[]) => Promise<void>> = {
  dev: runDevCommand,
  send: runSendCommand,
  ingress: runIngressCommand,
  worker: runWorkerCommand,
  'discord-forwarder': runDiscordForwarderCommand,
  doctor: runDoctorCommand,
};
/** Commands with a usage of their own, printed for `tributary <command> --help`. */
const usages: Record<string, string> = { doctor: DOCTOR_USAGE };
const command = positionals[0];
if (values.help || !command) {
  process.stdout.write(`${(command && usages[command]) || USAGE}\n`);
  process.exit(command || values.help ? 0 : 2);
}
const run = commands[command];
if (!run) {
  process.stderr.write(`tributary: unknown command '${command}'\n\n${USAGE}\n`);
  process.exit(2);
}
try {
  await run(argv.slice(argv.indexOf(command) + 1));
} catch (error) {
  const what =
    error instanceof ConfigError ? `configuration error: ${error.message}` : (error as Error).message;
  process.stderr.write(`tributary ${command}: ${what}\n`);
  process.exit(1);
}
