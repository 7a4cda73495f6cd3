import { ConfigError } from '@tributary/config';
import { runDiscordForwarder } from './run.js';

try {
  await runDiscordForwarder(process.env);
} catch (error) {
  const what = error instanceof ConfigError ? `configuration error: ${error.message}` : String(error);
  process.stderr.write(`discord-forwarder: ${what}\n`);
  process.exit(1);
}
