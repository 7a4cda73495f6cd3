/**
 * Packs bench:scale for a machine with many cores and none of node, redis-server or network: one
 * tarball holding this machine's node, redis-server and redis-cli (with the shared libraries they
 * load beyond the C library), the project's sources as tsx runs them, and the node_modules that npm
 * counts as production dependencies of the workspaces (which include tsx and undici). Unpacked
 * anywhere, `run-scale.sh` runs the sweep with them and nothing else on PATH:
 *
 *   npm run bench:scale:bundle [-- --out dist/tributary-scale-bench.tar.gz]
 *   tar xf tributary-scale-bench.tar.gz && tributary-scale-bench/run-scale.sh --workers 1,2,4,8
 *
 * The name's ending picks the compression (tar's --auto-compress): `.tar.gz` about 80 MB, `.tar.xz`
 * about 50 MB and a few minutes more on two cores, for a machine that takes in less.
 *
 * The target needs Linux on the same CPU architecture with a C library (glibc) at least as new as this
 * machine's; the results land in tributary-scale-bench/project/bench/results/scale.json unless
 * `--results` says otherwise.
 */
import { execFileSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { chmod, copyFile, cp, mkdir, mkdtemp, readlink, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, delimiter, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const root = fileURLToPath(new URL('../../', import.meta.url));
const { values } = parseArgs({
  options: { out: { type: 'string', default: join(root, 'dist', 'tributary-scale-bench.tar.gz') } },
});
const out = resolve(values.out);
const NAME = 'tributary-scale-bench';
const log = (line: string) => process.stderr.write(`${line}\n`);

/** Part of the C library, which the target must have: bundling it would not match its kernel's loader. */
const SYSTEM_LIBRARY = /^(linux-vdso|ld-linux|libc|libm|libdl|libpthread|librt|libresolv)[.-]/;

function onPath(command: string): string {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const candidate = join(dir, command);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // Not in this folder.
    }
  }
  throw new Error(`${command} is not on PATH: the bundle carries this machine's ${command}`);
}

/** The shared libraries `binary` loads, by file name, outside the C library. */
function sharedLibraries(binary: string): Map<string, string> {
  const found = new Map<string, string>();
  for (const line of execFileSync('ldd', [binary], { encoding: 'utf8' }).split('\n')) {
    const match = /^\s*(\S+) => (\/\S+)/.exec(line);
    if (match && !SYSTEM_LIBRARY.test(match[1]!)) found.set(match[1]!, match[2]!);
  }
  return found;
}

/** The project's own files as tsx runs them: tracked or new, not ignored, without tests or results. */
function projectFiles(): string[] {
  const listed = execFileSync(
    'git',
    [
      'ls-files',
      '-co',
      '--exclude-standard',
      '--',
      'apps',
      'packages',
      'bench',
      'package.json',
      'tsconfig.json',
    ],
    { cwd: root, encoding: 'utf8' },
  );
  return listed
    .split('\n')
    .filter((file) => file !== '' && !file.split('/').includes('test') && !file.startsWith('bench/results/'));
}

/** Every package directory npm installed as a production dependency of the workspaces. */
function productionPackages(): string[] {
  // npm ls exits non-zero on a tree it finds untidy (an extraneous package); its list still stands.
  let listed: string;
  try {
    listed = execFileSync('npm', ['ls', '--all', '--omit=dev', '--parseable'], {
      cwd: root,
      encoding: 'utf8',
    });
  } catch (error) {
    listed = String((error as { stdout?: unknown }).stdout ?? '');
  }
  return listed
    .split('\n')
    .map((path) => relative(root, path))
    .filter((path) => path.startsWith('node_modules/'));
}

const staging = await mkdtemp(join(tmpdir(), 'tributary-bundle-'));
try {
  const base = join(staging, NAME);
  const project = join(base, 'project');
  for (const file of projectFiles()) {
    await mkdir(dirname(join(project, file)), { recursive: true });
    await copyFile(join(root, file), join(project, file));
  }
  const packages = productionPackages();
  const listed = new Set(packages);
  for (const path of packages) {
    const target = join(project, path);
    await mkdir(dirname(target), { recursive: true });
    // Workspaces are links into the project, kept as links.
    const link = await readlink(join(root, path)).catch(() => undefined);
    if (link !== undefined) {
      await symlink(link, target);
      continue;
    }
    // A package without the packages nested in it that npm did not list: it lists (and this copies)
    // a nested one only when something needs it.
    await cp(join(root, path), target, {
      recursive: true,
      filter: (source) => {
        const inside = relative(root, source);
        return inside === path || basename(dirname(inside)) !== 'node_modules' || listed.has(inside);
      },
    });
  }

  const bin = join(base, 'bin');
  const lib = join(base, 'lib');
  await mkdir(bin, { recursive: true });
  await mkdir(lib, { recursive: true });
  const binaries = [process.execPath, onPath('redis-server'), onPath('redis-cli')];
  for (const binary of binaries) {
    await copyFile(binary, join(bin, basename(binary)));
    for (const [name, path] of sharedLibraries(binary)) await copyFile(path, join(lib, name));
  }
  const runner = join(base, 'run-scale.sh');
  await writeFile(
    runner,
    `#!/bin/sh
# Runs npm run bench:scale from this unpacked bundle with its own node, redis-server and redis-cli:
#   ./run-scale.sh --workers 1,2,4,8 [--ingress 1] [--cluster] [--load closed|open] [--results <dir>]
set -e
case "$0" in */*) here=\${0%/*} ;; *) here=. ;; esac
here=$(cd "$here" && pwd)
PATH="$here/bin:$PATH"
LD_LIBRARY_PATH="$here/lib\${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PATH LD_LIBRARY_PATH
cd "$here/project"
exec node --import tsx bench/scale.ts "$@"
`,
  );
  await chmod(runner, 0o755);
  await mkdir(dirname(out), { recursive: true });
  execFileSync('tar', ['-C', staging, '--auto-compress', '-cf', out, NAME]);
  log(`scale bundle: ${out} (${packages.length} packages, node ${process.version})`);
  log(`run it: tar xf ${basename(out)} && ${NAME}/run-scale.sh --workers 1,2,4,8`);
} finally {
  await rm(staging, { recursive: true, force: true });
}
