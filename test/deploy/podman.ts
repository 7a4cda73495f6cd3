// Podman for the deployment tests: the stand-in base images (podman-stand-ins.sh), the project's image
// built from infra/docker/Dockerfile, and podman commands run with the containers.conf that works here.
import { execFile, spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { parse } from 'yaml';

export const root = fileURLToPath(new URL('../..', import.meta.url));
/** The tag docker-compose.yml gives the image; the compose smoke test starts the image this builds. */
export const IMAGE = 'tributary:local';
/** The public images docker-compose.yml runs by service, which stand-ins replace. */
const composeImages = (
  parse(readFileSync(join(root, 'docker-compose.yml'), 'utf8')) as {
    services: Record<string, { image?: string }>;
  }
).services;
/** `redis:7.4` → `docker.io/library/redis:7.4`, `prom/prometheus:v3` → `docker.io/prom/prometheus:v3`. */
function qualified(service: string): string {
  const image = composeImages[service]?.image;
  if (!image) throw new Error(`docker-compose.yml has no image for ${service}`);
  const parts = image.split('/');
  // A first part with a dot or a port, or "localhost", names a registry (docker's own rule).
  if (parts.length > 1 && /[.:]|^localhost$/.test(parts[0]!)) return image;
  return parts.length > 1 ? `docker.io/${image}` : `docker.io/library/${image}`;
}
const NODE_MAJOR = process.versions.node.split('.')[0]!;

/** Why the container tests cannot run on this machine, or undefined when they can. */
export function podmanProblem(...more: string[]): string | undefined {
  for (const tool of ['podman', 'runc', 'debootstrap', ...more]) {
    if (spawnSync('sh', ['-c', `command -v ${tool}`], { stdio: 'ignore' }).status !== 0) {
      return `${tool} is not installed (Debian: apt-get install podman runc podman-compose debootstrap golang-github-containernetworking-plugin-dnsname; .ci/run does it)`;
    }
  }
  if (process.getuid?.() !== 0)
    return 'the stand-in base images are built with debootstrap, which needs root';
  return undefined;
}

const say = (line: string) => process.stdout.write(`${line}\n`);

/** The environment every podman call runs with: CONTAINERS_CONF set by the stand-ins script. */
let preparedEnv: NodeJS.ProcessEnv | undefined;

/** Writes the containers.conf and builds the stand-in base images once per machine (they are cached). */
export async function preparePodman(): Promise<void> {
  if (preparedEnv) return;
  const cacheDir = join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'tributary-podman');
  const lines = await streamLines('bash', [
    join(root, 'test/deploy/podman-stand-ins.sh'),
    cacheDir,
    qualified('redis'),
    qualified('prometheus'),
  ]);
  preparedEnv = { ...process.env, CONTAINERS_CONF: lines.at(-1)! };
}

/** `podman <args>`, resolving with its stdout. */
export async function podman(...args: string[]): Promise<string> {
  const { stdout } = await promisify(execFile)('podman', args, {
    env: podmanEnv(),
    cwd: root,
    maxBuffer: 64 * 1024 * 1024,
  });
  return stdout;
}

export function podmanEnv(): NodeJS.ProcessEnv {
  if (!preparedEnv) throw new Error('preparePodman() first');
  return preparedEnv;
}

/**
 * Builds infra/docker/Dockerfile as it is, for the Node major this machine runs (its stand-in base),
 * tagged `tag` and with the build args given (a real agent's packages, for one); podman's layer cache
 * makes a rebuild of unchanged sources quick. Prints each build step as it starts.
 */
export async function buildImage(
  options: { tag?: string; buildArgs?: Record<string, string> } = {},
): Promise<void> {
  const buildArgs = Object.entries({ NODE_VERSION: NODE_MAJOR, ...options.buildArgs }).flatMap(
    ([name, value]) => ['--build-arg', `${name}=${value}`],
  );
  const tag = options.tag ?? IMAGE;
  await streamLines(
    'podman',
    ['build', '--network', 'host', ...buildArgs, '--tag', tag, '--file', 'infra/docker/Dockerfile', '.'],
    {
      env: podmanEnv(),
      show: (line) => (/STEP \d|COMMIT|Using cache|^Successfully/.test(line) ? line : undefined),
      label: tag,
    },
  );
}

/**
 * Runs a command, printing what `show` makes of each stdout line (nothing when undefined) with the
 * seconds since it started; resolves with all stdout lines.
 */
export function streamLines(
  command: string,
  args: string[],
  options: {
    cwd?: string;
    env?: NodeJS.ProcessEnv;
    show?: (line: string) => string | undefined;
    label?: string;
  } = {},
): Promise<string[]> {
  const started = Date.now();
  const elapsed = () => `${Math.round((Date.now() - started) / 1000)} s`;
  const child = spawn(command, args, {
    cwd: options.cwd ?? root,
    env: options.env ?? process.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const tail: string[] = [];
  createInterface({ input: child.stdout }).on('line', (line) => {
    lines.push(line);
    const shown = options.show?.(line);
    if (shown !== undefined) say(`${options.label}: [${elapsed()}] ${shown}`);
  });
  createInterface({ input: child.stderr }).on('line', (line) => {
    // The stand-ins script reports progress on stderr; anything else is kept for a failure message.
    if (line.startsWith('stand-ins:')) say(`${line} [${elapsed()}]`);
    tail.push(line);
    if (tail.length > 40) tail.shift();
  });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => {
      if (code === 0) {
        if (options.label) say(`${options.label}: done in ${elapsed()}`);
        resolve(lines);
      } else reject(new Error(`${command} ${args[0]} exited ${code}:\n${tail.join('\n')}`));
    });
  });
}

/** A container's exit code once it has stopped. */
export async function exitCode(container: string): Promise<number> {
  return Number((await podman('wait', container)).trim());
}
