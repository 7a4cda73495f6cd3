import { mkdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  AgentAuthError,
  AgentExitedError,
  type AgentInfo,
  AgentProcess,
  type AgentRoom,
  AgentStartError,
  AgentStartTimeoutError,
  applySessionMode,
  choosePermission,
  type NewSessionResponse,
  SUPPORTED_PROTOCOL_VERSIONS,
  UnsupportedProtocolVersionError,
} from '@tributary/acp';
import { HostLease } from '@tributary/acp/host-lease';
import { builtInAgentCommand } from '@tributary/agent';
import { ConfigError, loadWorkerConfig, type WorkerConfig } from '@tributary/config';
import type { LogSink } from '@tributary/observability';
import { type AgentIsolation, agentCommandConfig, agentIsolation, authFix } from '@tributary/worker';
import { type Command, parseCommandArgs, positiveInteger } from './command-line.js';

/** Agent stderr lines shown after a failure. */
const STDERR_LINES = 15;
const STDERR_LINE_CHARS = 240;
/** Terminal colour codes, which agents' loggers write even into a pipe. */
const ANSI_COLOUR = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g');

const say = (line = '') => process.stdout.write(`${line}\n`);
const pass = (line: string) => say(`✓ ${line}`);
const skip = (line: string) => say(`– ${line}`);
const detail = (line: string) => say(`    ${line}`);

/** The problems found; the first blocking one ends the run. */
class Report {
  problems = 0;
  fail(line: string, fix: string): void {
    this.problems += 1;
    say(`✗ ${line}`);
    detail(`fix: ${fix}`);
  }
  warn(line: string, fix: string): void {
    say(`! ${line}`);
    detail(`fix: ${fix}`);
  }
}

/** `tributary doctor`: can a worker use the configured agent? */
export const doctorCommand: Command = {
  async run(argv) {
    const { values } = parseCommandArgs(argv, {
      prompt: { type: 'string' },
      'timeout-ms': { type: 'string', default: '120000' },
    });
    const promptTimeoutMs = positiveInteger('timeout-ms', values['timeout-ms']);
    const config = loadWorkerConfig(process.env);
    const report = new Report();
    await diagnose(config, report, values.prompt, promptTimeoutMs);
    say();
    if (report.problems === 0) say('Result: a worker can use this agent.');
    else say(`Result: a worker cannot use this agent (${report.problems} problem(s) above).`);
    process.exitCode = report.problems === 0 ? 0 : 1;
  },
};

async function diagnose(
  config: Readonly<WorkerConfig>,
  report: Report,
  prompt: string | undefined,
  promptTimeoutMs: number,
): Promise<void> {
  const agent = agentCommandConfig(config, builtInAgentCommand());
  const root = config.agentWorkspaces;
  const commandLine = [agent.command, ...agent.args].join(' ');
  say(`agent command   ${config.agentCommand ? commandLine : `built-in agent (${commandLine})`}`);
  say(`workspaces      ${root}/{platform}/{channel}/{thread} (AGENT_WORKSPACES)`);
  say(`agent env       ${agent.inheritEnv?.join(', ')}`);
  say(`auth method     ${config.agentAuthMethod ?? 'none (AGENT_AUTH_METHOD unset)'}`);
  say(`permissions     ${config.permissionPolicy} (AGENT_PERMISSION_POLICY)`);
  say(`mcp servers     ${mcpServerNames(config) ?? 'none (AGENT_MCP_SERVERS unset)'}`);
  say(`session mode    ${config.agentSessionMode ?? 'as the agent opens it (AGENT_SESSION_MODE unset)'}`);
  say();

  const unset = config.agentEnv.filter((name) => process.env[name] === undefined);
  if (unset.length > 0) {
    report.warn(
      `AGENT_ENV names ${unset.join(', ')}, not set here, so the agent will not get ${unset.length === 1 ? 'it' : 'them'}`,
      'set them in the environment of the worker (and of this check), or drop them from AGENT_ENV',
    );
  }
  let isolation: AgentIsolation;
  // An agent host starts agents only under a lease, as a worker's warden holds it; the check holds one.
  let lease: HostLease | undefined;
  try {
    isolation = await agentIsolation(config, () => lease?.ticket);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    report.fail(
      `isolation: ${error.message}`,
      'a worker refuses to start so; see docs/agents.md, "Isolation"',
    );
    return;
  }
  const { sandbox } = isolation;
  if (sandbox.kind === 'off') {
    report.warn(
      `isolation: ${sandbox.describe}`,
      'install bubblewrap and unset AGENT_SANDBOX, or run the agents in a container of their own (docs/agents.md, "Isolation")',
    );
  } else pass(`isolation: ${sandbox.describe}`);
  // A worker creates the directory when it starts; so does this check.
  if (
    !(await mkdir(root, { recursive: true }).then(
      () => isDirectory(root),
      () => false,
    ))
  ) {
    report.fail(
      `workspace root ${root} cannot be created or is not a directory`,
      'create it with permissions for the worker, or set AGENT_WORKSPACES elsewhere',
    );
    return;
  }
  pass(`workspace root ${root} is ready`);
  // The check's agent runs in a room of its own, as a thread's would, deleted afterwards.
  const room = { workspace: join(root, '.doctor', 'workspace'), home: join(root, '.doctor', 'home') };
  await Promise.all([mkdir(room.workspace, { recursive: true }), mkdir(room.home, { recursive: true })]);
  if (sandbox.kind === 'agent-host') lease = new HostLease(config.agentHostSocket, 5000, () => {});
  const pulse = setInterval(() => lease?.pulse(), 250);
  try {
    if (lease && !(await Promise.race([lease.ready.then(() => true), sleep(5000).then(() => false)]))) {
      report.fail(
        'the agent host did not give this check a lease within 5 s',
        'check the agent host’s log; it answered the isolation question, so it is listening',
      );
      return;
    }
    await checkAgent(config, agent, isolation, room, report, prompt, promptTimeoutMs);
  } finally {
    clearInterval(pulse);
    lease?.close();
    await rm(join(root, '.doctor'), { recursive: true, force: true });
  }
}

async function checkAgent(
  config: Readonly<WorkerConfig>,
  agent: ReturnType<typeof agentCommandConfig>,
  { sandbox, launcher }: AgentIsolation,
  room: AgentRoom,
  report: Report,
  prompt: string | undefined,
  promptTimeoutMs: number,
): Promise<void> {
  const stderr: string[] = [];
  const reply: string[] = [];
  const started = Date.now();
  let process_: AgentProcess;
  try {
    process_ = await AgentProcess.start({
      ...agent,
      cwd: room.workspace,
      home: room.home,
      launcher,
      initializeTimeoutMs: config.agentInitTimeoutMs,
      logger: stderrCollector(stderr),
      onSessionUpdate: (_sessionId, event) => {
        if (event.kind === 'agent_message_chunk' && event.content.type === 'text') {
          reply.push(event.content.text);
        }
      },
      onPermissionRequest: (request) => {
        const outcome = choosePermission(config.permissionPolicy, request.options, false);
        detail(
          `permission asked: ${request.toolCall.title ?? request.toolCall.toolCallId} → ${JSON.stringify(outcome)}`,
        );
        return { outcome };
      },
    });
  } catch (error) {
    if (error instanceof AgentAuthError) {
      // initialize went through; authenticate did not.
      pass(`started and initialized in ${Date.now() - started} ms`);
      report.fail(`authenticate: ${error.message}`, authFix(error));
    } else startFailed(error, agent.command, report);
    printStderr(stderr);
    return;
  }
  try {
    const startMs = Date.now() - started;
    pass(`started (pid ${process_.pid}) and initialized in ${startMs} ms`);
    if (startMs > config.agentInitTimeoutMs / 2) {
      report.warn(
        `the agent took more than half of AGENT_INIT_TIMEOUT_MS (${config.agentInitTimeoutMs} ms) to start`,
        'on a busier machine it may not start in time: raise AGENT_INIT_TIMEOUT_MS, and keep AGENT_WARM_SPARES above 0 so threads do not wait for it',
      );
    }
    printInfo(process_.info);
    if (config.agentAuthMethod === undefined) {
      skip('authenticate: not called (AGENT_AUTH_METHOD unset)');
    } else if (process_.info.authMethods.length === 0) {
      skip(
        `authenticate: not called, the agent offers no auth methods (AGENT_AUTH_METHOD=${config.agentAuthMethod} unused)`,
      );
    } else pass(`authenticate: signed in with "${config.agentAuthMethod}"`);

    let session: NewSessionResponse;
    try {
      session = await process_.openNewSession(sandbox.sessionCwd(room));
    } catch (error) {
      requestFailed('session/new', error, report);
      printStderr(stderr);
      return;
    }
    pass(`session/new in ${sandbox.sessionCwd(room)}: session ${session.sessionId}`);
    printModes(session);
    if (config.agentSessionMode !== undefined) {
      if (!(await setMode(process_, session, config.agentSessionMode, report, stderr))) return;
    }

    if (prompt === undefined) skip('prompt: not sent (--prompt "text" sends one)');
    else await sendPrompt(process_, session.sessionId, prompt, promptTimeoutMs, reply, report, stderr);
    // Leave no session behind in the agent's own state.
    if (process_.info.supports.close) await process_.closeSession(session.sessionId).catch(() => undefined);
  } finally {
    await process_.kill();
  }
}

async function sendPrompt(
  agent: AgentProcess,
  sessionId: string,
  prompt: string,
  promptTimeoutMs: number,
  reply: string[],
  report: Report,
  stderr: string[],
): Promise<void> {
  const sent = Date.now();
  let timer: NodeJS.Timeout | undefined;
  try {
    const answer = await Promise.race([
      agent.prompt(sessionId, [{ type: 'text', text: prompt }]),
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`no answer within ${promptTimeoutMs} ms`)),
          promptTimeoutMs,
        );
      }),
    ]);
    const text = reply.join('');
    pass(`prompt: stop reason ${answer.stopReason}, ${text.length} chars in ${Date.now() - sent} ms`);
    for (const line of text.split('\n')) detail(`| ${line}`);
    if (answer.stopReason === 'refusal') {
      report.fail('the agent refused the prompt', "try another prompt; see the agent's own logs");
    }
  } catch (error) {
    requestFailed('prompt', error, report);
    printStderr(stderr);
  } finally {
    clearTimeout(timer);
  }
}

function startFailed(error: unknown, command: string, report: Report): void {
  const cause = (error as Error).cause as NodeJS.ErrnoException | undefined;
  if (error instanceof AgentStartError && cause?.code === 'ENOENT') {
    report.fail(
      `start: command "${command}" was not found`,
      'install the agent, or set AGENT_COMMAND to its full path (it is looked up on the PATH the agent gets)',
    );
  } else if (error instanceof AgentStartError && cause?.code === 'EACCES') {
    report.fail(
      `start: "${command}" is not executable`,
      `make it executable (chmod +x), or fix AGENT_COMMAND`,
    );
  } else if (error instanceof AgentStartTimeoutError) {
    report.fail(
      `start: ${error.message}`,
      `the agent may just be slow to start (gemini-cli took 5–23 s on a busy machine): raise AGENT_INIT_TIMEOUT_MS (now ${error.timeoutMs}); if it never answers, check that AGENT_COMMAND speaks ACP on stdio (some CLIs need a flag, see docs/agents.md)`,
    );
  } else if (error instanceof UnsupportedProtocolVersionError) {
    report.fail(`initialize: ${error.message}`, 'use a version of the agent that speaks this ACP version');
  } else if (cause instanceof AgentExitedError) {
    report.fail(
      `start: the agent exited before answering initialize (${cause.signal ?? `code ${cause.code}`})`,
      'run AGENT_COMMAND by hand to see why; its stderr is below. A CLI may need its ACP flag (docs/agents.md)',
    );
  } else {
    report.fail(
      `start: ${firstLine(error)}`,
      'check that AGENT_COMMAND starts an ACP agent on stdio (some CLIs need a flag, see docs/agents.md)',
    );
  }
}

function requestFailed(what: string, error: unknown, report: Report): void {
  if (error instanceof AgentAuthError) {
    report.fail(`${what}: ${error.message}`, authFix(error));
  } else if (error instanceof AgentExitedError) {
    report.fail(`${what}: ${firstLine(error)}`, 'the agent crashed; its stderr is below');
  } else {
    report.fail(
      `${what}: ${firstLine(error)}`,
      "see the agent's message and stderr: credentials, network access or a path the sandbox does not show (AGENT_SANDBOX_READ) are the usual causes",
    );
  }
}

function printInfo(info: AgentInfo): void {
  const name = info.agentInfo ? `${info.agentInfo.name} ${info.agentInfo.version}` : '(agentInfo not given)';
  const yes = (flag: boolean) => (flag ? 'yes' : 'no');
  const speaks = SUPPORTED_PROTOCOL_VERSIONS.join(' and ');
  detail(`protocol version ${info.protocolVersion} (negotiated; speaks ${speaks}), agent ${name}`);
  detail(
    `sessions: load ${yes(info.supports.loadSession)}, resume ${yes(info.supports.resume)}, close ${yes(info.supports.close)}` +
      `; prompt: image ${yes(info.promptCapabilities.image)}, audio ${yes(info.promptCapabilities.audio)}, embedded context ${yes(info.promptCapabilities.embeddedContext)}`,
  );
  if (!info.supports.loadSession && !info.supports.resume) {
    detail('note: neither load nor resume: a thread whose agent process ends starts a new session');
  }
  if (info.authMethods.length === 0) detail('auth methods: none');
  for (const method of info.authMethods) {
    const kind = method.type === 'terminal' ? ' [terminal]' : '';
    detail(
      `auth method "${method.id}"${kind}: ${method.name}${method.description ? ` — ${method.description}` : ''}`,
    );
  }
}

function printModes(session: NewSessionResponse): void {
  const modes = session.modes;
  if (!modes) {
    detail('modes: none advertised');
    return;
  }
  const names = modes.availableModes.map((m) => (m.id === modes.currentModeId ? `${m.id} (current)` : m.id));
  detail(`modes: ${names.join(', ')}`);
}

/** Server names, with their transport; never their commands, URLs or variables, which may hold secrets. */
function mcpServerNames(config: Readonly<WorkerConfig>): string | undefined {
  if (config.agentMcpServers.length === 0) return undefined;
  return config.agentMcpServers
    .map((server) => `${server.name} (${'type' in server ? server.type : 'stdio'})`)
    .join(', ');
}

/** Applies AGENT_SESSION_MODE as a worker does; false when the agent died under it. */
async function setMode(
  agent: AgentProcess,
  session: NewSessionResponse,
  modeId: string,
  report: Report,
  stderr: string[],
): Promise<boolean> {
  let outcome: Awaited<ReturnType<typeof applySessionMode>>;
  try {
    outcome = await applySessionMode(agent, session.sessionId, session.modes, modeId);
  } catch (error) {
    requestFailed('session/set_mode', error, report);
    printStderr(stderr);
    return false;
  }
  switch (outcome.kind) {
    case 'set':
      pass(`session/set_mode: session now in mode "${modeId}"`);
      break;
    case 'current':
      pass(`session mode: already "${modeId}", session/set_mode not needed`);
      break;
    case 'no-modes':
      report.warn(
        `AGENT_SESSION_MODE=${modeId}, but the agent offers no session modes`,
        'unset AGENT_SESSION_MODE: a worker ignores it for this agent',
      );
      break;
    case 'not-offered':
      report.warn(
        `AGENT_SESSION_MODE=${modeId}, which the agent does not offer (it offers ${outcome.offered.join(', ')})`,
        'set AGENT_SESSION_MODE to one of the offered modes, or unset it; a worker keeps the session in its current mode',
      );
      break;
    case 'refused':
      report.warn(
        `session/set_mode "${modeId}" refused: ${outcome.reason}`,
        "check the mode id against the agent's documentation, or unset AGENT_SESSION_MODE",
      );
      break;
  }
  return true;
}

function printStderr(lines: string[]): void {
  if (lines.length === 0) return;
  detail(`agent stderr (last ${Math.min(lines.length, STDERR_LINES)} lines):`);
  for (const line of lines.slice(-STDERR_LINES)) {
    detail(`  ${line.length > STDERR_LINE_CHARS ? `${line.slice(0, STDERR_LINE_CHARS)}…` : line}`);
  }
}

function stderrCollector(lines: string[]): LogSink {
  const ignore = () => undefined;
  return {
    debug: (fields) => {
      const { line } = fields as { line?: unknown };
      if (typeof line === 'string') lines.push(line.replace(ANSI_COLOUR, ''));
    },
    info: ignore,
    warn: ignore,
    error: ignore,
  };
}

function firstLine(error: unknown): string {
  return ((error as Error).message ?? String(error)).split('\n')[0]!;
}

async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}
