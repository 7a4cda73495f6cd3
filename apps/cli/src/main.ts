import { readFileSync } from 'node:fs';
import { ConfigError } from '@tributary/config';
import { type Command, UsageError } from './command-line.js';
import { type CommandName, USAGES } from './usages.js';

const USAGE = `usage: tributary <command> [options]
       tributary <command> --help
       tributary --version

commands:
  dev                 run the whole stack locally: Redis, ingress, a worker, the built-in agent
  send "text" ...     post messages to the local stack and print the agent's replies
  ingress             serve the platform webhooks and queue each message
  worker              run turns: claim threads, drive the ACP agent, deliver replies
  discord-forwarder   hold the Discord Gateway connection and forward messages to ingress
  agent-host          run a worker's agents in a container of their own, reached over a socket
  doctor              check that a worker could use the configured agent
  commands            register the thread commands with Discord and Telegram; Slack's manifest
  routes              check a route table file, and which route a channel takes
  admin               list and act on the fleet: threads, dead letters, workers, audit

Configuration comes from environment variables (see README).`;

// Each command's module is loaded only when it is called: the server commands bring Fastify, BullMQ,
// the ACP SDK and the platform SDKs, some 1.5 s of loading that `admin`, `--version` or a mistyped
// command have no use for.
const commands: Record<CommandName, () => Promise<Command>> = {
  dev: async () => (await import('./dev-command.js')).devCommand,
  send: async () => (await import('./send-command.js')).sendCommand,
  ingress: async () => (await import('./ingress-command.js')).ingressCommand,
  worker: async () => (await import('./worker-command.js')).workerCommand,
  'discord-forwarder': async () => (await import('./discord-forwarder-command.js')).discordForwarderCommand,
  'agent-host': async () => (await import('./agent-host-command.js')).agentHostCommand,
  doctor: async () => (await import('./doctor-command.js')).doctorCommand,
  commands: async () => (await import('./commands-command.js')).commandsCommand,
  routes: async () => (await import('./routes-command.js')).routesCommand,
  admin: async () => (await import('./admin-command.js')).adminCommand,
};

const [first, ...rest] = process.argv.slice(2);
const isHelp = (arg: string) => arg === '--help' || arg === '-h';
if (first === undefined || isHelp(first)) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(first === undefined ? 2 : 0);
}
if (first === '--version' || first === '-v') {
  const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
  process.stdout.write(`tributary ${manifest.version}\n`);
  process.exit(0);
}
const load = Object.hasOwn(commands, first) ? commands[first as CommandName] : undefined;
if (!load) {
  const what = first.startsWith('-') ? `unknown option '${first}'` : `unknown command '${first}'`;
  process.stderr.write(`tributary: ${what}\n\n${USAGE}\n`);
  process.exit(2);
}
// A failure nobody awaited ends the process, as by default, but says only its message and stack: the
// default report prints every field of the error, and a Redis client's error carries the command's
// arguments, an AUTH's password among them.
const crash = (error: unknown) => {
  const what = error instanceof Error ? (error.stack ?? error.message) : String(error);
  process.stderr.write(`tributary ${first}: unexpected failure: ${what}\n`);
  process.exit(1);
};
process.on('unhandledRejection', crash);
process.on('uncaughtException', crash);
// `--` ends the options: what follows is text to send, even "--help".
const options = rest.includes('--') ? rest.slice(0, rest.indexOf('--')) : rest;
if (options.some(isHelp)) {
  // Without loading the command: a server's --help must not start loading the server.
  process.stdout.write(`${USAGES[first as CommandName]}\n`);
  process.exit(0);
}
const command = await load();
try {
  await command.run(rest);
} catch (error) {
  if (error instanceof UsageError) {
    process.stderr.write(`tributary ${first}: ${error.message}\n\n${USAGES[first as CommandName]}\n`);
    process.exit(2);
  }
  const what =
    error instanceof ConfigError ? `configuration error: ${error.message}` : (error as Error).message;
  process.stderr.write(`tributary ${first}: ${what}\n`);
  process.exit(1);
}
