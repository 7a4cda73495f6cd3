import { execFile } from 'node:child_process';
import { existsSync, lstatSync, readlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { promisify } from 'node:util';
import type { AgentRoom, AgentSandbox, SpawnLine } from './agent-sandbox.js';

const run = promisify(execFile);

/** Where the agent finds its workspace and its home inside the sandbox, whatever the host paths. */
export const SANDBOX_WORKSPACE = '/workspace';
export const SANDBOX_HOME = '/home/agent';

/** The system, read-only: programs and libraries (merged-/usr links are recreated as links). */
const SYSTEM_PATHS = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32', '/opt'];

/**
 * What of /etc a program needs to run and reach the network (certificates, name resolution, users,
 * time zone, Debian's alternatives); never the whole of it, where an operator may keep settings files
 * with credentials.
 */
const ETC_PATHS = [
  'alternatives',
  'ca-certificates',
  'ca-certificates.conf',
  'ssl',
  'pki',
  'resolv.conf',
  'hosts',
  'host.conf',
  'nsswitch.conf',
  'gai.conf',
  'services',
  'protocols',
  'localtime',
  'timezone',
  'passwd',
  'group',
  'ld.so.cache',
  'ld.so.conf',
  'ld.so.conf.d',
  'mime.types',
  'os-release',
  'debian_version',
  'gitconfig',
].map((name) => `/etc/${name}`);

export interface BubblewrapOptions {
  /** The bwrap binary. Default `bwrap` on PATH. */
  binary?: string;
  /** Host paths the agent may read besides the system: its own installation, the broker's code. */
  readOnly: readonly string[];
}

/** A path as the sandbox gets it: a link to a sibling (merged /usr) stays a link, anything else a read-only bind. */
function systemMount(path: string): string[] {
  const info = lstatSync(path, { throwIfNoEntry: false });
  if (!info) return [];
  if (info.isSymbolicLink()) return ['--symlink', readlinkSync(path), path];
  return ['--ro-bind', path, path];
}

/**
 * The agent in namespaces of its own (bubblewrap, docs/adr/0044): its own PID namespace and /proc (it
 * sees and signals only its own processes, so no other process's environment, memory or command
 * line), its own mount namespace holding only the system, the paths named read-only, its room and a
 * private /tmp (none of the worker's files, secrets or other threads), its own IPC and UTS namespaces
 * (keeping the hostname it had: container seccomp profiles refuse `sethostname`), and a user
 * namespace in which it is uid 1000, not root. It keeps the host's network: it must reach
 * its model API. `--die-with-parent`: if the worker's bwrap goes, everything inside goes with it.
 */
export function bubblewrapSandbox(options: BubblewrapOptions, version: string): AgentSandbox {
  const binary = options.binary ?? 'bwrap';
  const readOnly = [...new Set(options.readOnly)].filter((path) => existsSync(path));
  const fixed = [
    '--unshare-user',
    '--uid',
    '1000',
    '--gid',
    '1000',
    '--unshare-pid',
    '--unshare-ipc',
    '--unshare-uts',
    '--unshare-cgroup-try',
    '--die-with-parent',
    '--new-session',
    // The private /tmp first: a path it would hide (an installation under /tmp) is bound after it.
    '--proc',
    '/proc',
    '--dev',
    '/dev',
    '--tmpfs',
    '/tmp',
    ...SYSTEM_PATHS.flatMap(systemMount),
    ...ETC_PATHS.flatMap((path) => (existsSync(path) ? ['--ro-bind', path, path] : [])),
    ...readOnly.flatMap((path) => ['--ro-bind', path, path]),
  ];
  return {
    kind: 'bubblewrap',
    describe: `bubblewrap ${version}: own PID, mount, IPC and user namespaces; reads the system and ${readOnly.join(', ') || 'nothing else'}; writes its thread's workspace, its agent home and a private /tmp; shares the network`,
    wrap(command: string, args: readonly string[], room: AgentRoom): SpawnLine {
      return {
        command: binary,
        args: [
          ...fixed,
          '--bind',
          room.workspace,
          SANDBOX_WORKSPACE,
          '--bind',
          room.home,
          SANDBOX_HOME,
          '--chdir',
          SANDBOX_WORKSPACE,
          '--',
          command,
          ...args,
        ],
        cwd: room.workspace,
        env: { HOME: SANDBOX_HOME, TMPDIR: '/tmp', USER: 'agent', LOGNAME: 'agent' },
      };
    },
    sessionCwd: () => SANDBOX_WORKSPACE,
    roomsMove: true,
  };
}

/**
 * Whether bubblewrap can isolate an agent here: its version, once a sandbox like the agents' ran a
 * command; the reason otherwise (not installed, user namespaces refused: a container's seccomp
 * profile, a kernel setting).
 */
export async function probeBubblewrap(
  binary = 'bwrap',
): Promise<{ ok: true; version: string } | { ok: false; reason: string }> {
  try {
    const { stdout } = await run(binary, ['--version'], { timeout: 5000 });
    const version = stdout.trim().replace(/^bubblewrap\s+/, '');
    const sandbox = bubblewrapSandbox({ binary, readOnly: [] }, version);
    const line = sandbox.wrap('/bin/true', [], { workspace: tmpdir(), home: tmpdir() });
    await run(line.command, line.args, { timeout: 5000 });
    return { ok: true, version };
  } catch (error) {
    const failure = error as NodeJS.ErrnoException & { stderr?: string };
    if (failure.code === 'ENOENT') return { ok: false, reason: `${binary} is not installed` };
    return { ok: false, reason: (failure.stderr || failure.message).trim() };
  }
}
