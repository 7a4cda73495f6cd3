import { homedir } from 'node:os';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { ndJsonStream } from '@agentclientprotocol/sdk';
import { createAgentApp } from './agent-app.js';
import { type AgentFeatures, parseFeatures } from './features.js';
import { stderrLog } from './log.js';
import { type AgentScript, parseScriptJson } from './script.js';
import { SessionStore } from './session-store.js';

/** `TRIBUTARY_AGENT_SCRIPTING`: `on` lets `@agent` lines in prompts script turns; off by default. */
function parseScripting(raw: string | undefined): boolean {
  if (raw === undefined || raw === '' || raw === 'off') return false;
  if (raw === 'on') return true;
  throw new Error(`TRIBUTARY_AGENT_SCRIPTING must be "on" or "off", not ${JSON.stringify(raw)}`);
}

/** `TRIBUTARY_AGENT_ACP_VERSION`: the ACP version spoken, `1` (the default) or `2`. */
function parseAcpVersion(raw: string | undefined): number | undefined {
  if (raw === undefined || raw === '') return undefined;
  if (raw === '1' || raw === '2') return Number(raw);
  throw new Error(`TRIBUTARY_AGENT_ACP_VERSION must be "1" or "2", not ${JSON.stringify(raw)}`);
}

/**
 * A positive whole number from the environment variable `name`, undefined when unset. Read so:
 * `TRIBUTARY_AGENT_SESSION_RETENTION_MS`, how long an untouched session file is kept (default 7 days);
 * `TRIBUTARY_AGENT_MAX_MESSAGE_BYTES`, the longest protocol message it reads, as an agent's ACP SDK
 * limits it (the SDK's own default when unset: a longer one closes the connection, as such agents do).
 */
function positiveWholeNumber(name: string): number | undefined {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return undefined;
  if (!/^\d+$/.test(raw) || Number(raw) < 1) {
    throw new Error(`${name} must be a positive whole number, not ${JSON.stringify(raw)}`);
  }
  return Number(raw);
}

let features: AgentFeatures;
let defaults: AgentScript;
let scripting: boolean;
let retentionMs: number | undefined;
let maxMessageBytes: number | undefined;
try {
  retentionMs = positiveWholeNumber('TRIBUTARY_AGENT_SESSION_RETENTION_MS');
  maxMessageBytes = positiveWholeNumber('TRIBUTARY_AGENT_MAX_MESSAGE_BYTES');
  features = parseFeatures(
    process.env.TRIBUTARY_AGENT_CAPS,
    parseAcpVersion(process.env.TRIBUTARY_AGENT_ACP_VERSION),
  );
  scripting = parseScripting(process.env.TRIBUTARY_AGENT_SCRIPTING);
  const rawDefaults = process.env.TRIBUTARY_AGENT_DEFAULTS;
  defaults = rawDefaults ? parseScriptJson(rawDefaults, 'TRIBUTARY_AGENT_DEFAULTS') : {};
} catch (error) {
  stderrLog('error', 'invalid configuration', { error: (error as Error).message });
  process.exit(2);
}

// Under HOME, as coding agents keep theirs (~/.claude, ~/.codex): a sandboxed agent's HOME is its
// thread's agent home, so its sessions travel with the thread; unsandboxed, they survive restarts.
const stateDir = process.env.TRIBUTARY_AGENT_STATE_DIR || join(homedir(), '.tributary-agent');
const app = createAgentApp({
  store: new SessionStore(stateDir, retentionMs),
  features,
  defaults,
  scripting,
  log: stderrLog,
});
const connection = app.connect(
  ndJsonStream(
    Writable.toWeb(process.stdout),
    Readable.toWeb(process.stdin) as ReadableStream<Uint8Array>,
    maxMessageBytes === undefined ? {} : { maxMessageBytes },
  ),
);
stderrLog('info', 'ready', { stateDir, features, scripting });

if (features.outliveStdin) {
  // Writes to a client that is gone fail with EPIPE; an agent that runs on regardless ignores them.
  process.stdout.on('error', () => {});
  process.stderr.on('error', () => {});
}
// The client closing our stdin is the end of the conversation, unless told to play an agent that
// does not notice.
await connection.closed;
if (features.outliveStdin) stderrLog('warn', 'stdin closed; running on, as scripted');
else process.exit(0);
