// The published agents (claude-agent-acp, codex-acp, gemini-cli), installed once per version set from
// test/agents/published with `npm ci`, so a fresh clone gets the very packages the lockfile names.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { copyFile, mkdir, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const published = fileURLToPath(new URL('./published/', import.meta.url));
const cacheRoot = fileURLToPath(new URL('../../node_modules/.cache/tributary-agents/', import.meta.url));

/** The install prefix: its `node_modules/.bin` holds `claude-agent-acp`, `codex-acp` and `gemini`. */
export async function installPublishedAgents(log: (line: string) => void): Promise<string> {
  const lock = await readFile(join(published, 'package-lock.json'));
  const prefix = join(cacheRoot, createHash('sha256').update(lock).digest('hex').slice(0, 16));
  if (existsSync(join(prefix, 'node_modules', '.bin'))) {
    log(`published agents: already installed in ${prefix}`);
    return prefix;
  }
  // Installed beside the final folder and renamed into place, so an interrupted install is never
  // taken for a whole one.
  const partial = `${prefix}.partial-${process.pid}`;
  await rm(partial, { recursive: true, force: true });
  await mkdir(partial, { recursive: true });
  for (const file of ['package.json', 'package-lock.json']) {
    await copyFile(join(published, file), join(partial, file));
  }
  const started = performance.now();
  log(`published agents: npm ci into ${partial} (first run only, about 400 MB)`);
  // Install scripts stay off: they would build node-pty and keytar from source, which none of the
  // agents needs to run a turn.
  await run('npm', ['ci', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel', 'http'], partial, log);
  // Another run may have finished first; its copy is as good and may be in use.
  if (existsSync(prefix)) await rm(partial, { recursive: true, force: true });
  else await rename(partial, prefix);
  log(`published agents: installed in ${Math.round((performance.now() - started) / 1000)} s`);
  return prefix;
}

function run(command: string, args: string[], cwd: string, log: (line: string) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    const forward = (chunk: Buffer) => {
      for (const line of chunk.toString().split('\n')) if (line.trim()) log(`  ${line}`);
    };
    child.stdout.on('data', forward);
    child.stderr.on('data', forward);
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`${command} ${args.join(' ')} exited with ${code}`)),
    );
  });
}
