// The image cannot be built here (no Docker engine), so its recipe is checked for the properties the
// deployments rely on: Node LTS on a slim base, dev dependencies left out, a non-root numeric user,
// tini in front of the `tributary` entrypoint, no HEALTHCHECK, and a build context that carries the
// sources and nothing else.
import { accessSync, constants, readdirSync, readFileSync, statSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const read = (path: string) => readFileSync(join(root, path), 'utf8');

interface Instruction {
  keyword: string;
  args: string;
  stage: number;
}

interface Stage {
  index: number;
  name: string | undefined;
  base: string;
  instructions: Instruction[];
}

/** Dockerfile instructions with comments dropped and `\` continuations joined. */
function parseDockerfile(text: string): { preamble: Instruction[]; stages: Stage[] } {
  const logical: string[] = [];
  let pending = '';
  for (const raw of text.split('\n')) {
    const line = raw.trimEnd();
    if (/^\s*#/.test(line)) continue;
    if (line.endsWith('\\')) {
      pending += `${line.slice(0, -1)} `;
      continue;
    }
    const joined = (pending + line).trim();
    pending = '';
    if (joined) logical.push(joined);
  }
  const preamble: Instruction[] = [];
  const stages: Stage[] = [];
  for (const line of logical) {
    const match = /^(\S+)\s*(.*)$/s.exec(line)!;
    const keyword = match[1]!.toUpperCase();
    const args = match[2]!.trim();
    if (keyword === 'FROM') {
      const [base, as, name] = args.split(/\s+/);
      stages.push({
        index: stages.length,
        name: as?.toUpperCase() === 'AS' ? name : undefined,
        base: base!,
        instructions: [],
      });
      continue;
    }
    const instruction = { keyword, args, stage: stages.length - 1 };
    if (stages.length === 0) preamble.push(instruction);
    else stages.at(-1)!.instructions.push(instruction);
  }
  return { preamble, stages };
}

const dockerfile = parseDockerfile(read('infra/docker/Dockerfile'));
const final = dockerfile.stages.at(-1)!;
const all = dockerfile.stages.flatMap((stage) => stage.instructions);
const only = (stage: Stage, keyword: string) => stage.instructions.filter((i) => i.keyword === keyword);

describe('infra/docker/Dockerfile', () => {
  it('builds on a slim Node LTS image chosen by ARG NODE_VERSION, at or above the engines floor', () => {
    const arg = dockerfile.preamble.find((i) => i.keyword === 'ARG' && i.args.startsWith('NODE_VERSION='));
    expect(arg, 'ARG NODE_VERSION=<major> before the first FROM').toBeDefined();
    const major = Number(arg!.args.split('=')[1]);
    // Node's LTS lines are the even majors.
    expect(Number.isInteger(major) && major % 2 === 0).toBe(true);
    const floor = Number(/(\d+)/.exec(JSON.parse(read('package.json')).engines.node)![1]);
    expect(major).toBeGreaterThanOrEqual(floor);
    expect(dockerfile.stages.length).toBeGreaterThanOrEqual(2);
    for (const stage of dockerfile.stages) {
      expect(stage.base).toMatch(/^node:\$\{NODE_VERSION\}-[a-z]+-slim$/);
    }
  });

  it('installs only production dependencies, in a stage the final one copies from', () => {
    const install = dockerfile.stages.find((stage) =>
      only(stage, 'RUN').some((i) => /\bnpm ci\b/.test(i.args)),
    );
    expect(install, 'a stage running npm ci').toBeDefined();
    const npmCi = only(install!, 'RUN').find((i) => /\bnpm ci\b/.test(i.args))!.args;
    expect(npmCi).toContain('--omit=dev');
    expect(install).not.toBe(final);
    const copies = only(final, 'COPY').map((i) => i.args);
    expect(copies.some((args) => args.includes(`--from=${install!.name}`))).toBe(true);
    // The final stage installs no packages from npm and no compiler.
    for (const run of only(final, 'RUN')) {
      expect(run.args).not.toMatch(/\bnpm (ci|install|i)\b/);
      expect(run.args).not.toMatch(/\b(build-essential|gcc|g\+\+|make|python3?)\b/);
    }
  });

  it('compiles the sources to JavaScript in the final stage, which the tributary command runs when present', () => {
    const compile = only(final, 'RUN').find((run) => run.args.includes('infra/docker/compile-js.mjs'));
    expect(compile?.args).toMatch(/^node infra\/docker\/compile-js\.mjs \/app\b/);
    const bin = read('apps/cli/bin/tributary.js');
    expect(bin).toContain("new URL('../src/main.js', import.meta.url)");
    // Development runs the sources through tsx: the apps that start node on TypeScript declare it.
    expect(bin).toContain("import('tsx/esm/api')");
    for (const app of ['apps/cli', 'apps/agent']) {
      const manifest = JSON.parse(read(`${app}/package.json`));
      expect(manifest.dependencies?.tsx, `${app} dependencies.tsx`).toBeDefined();
    }
  });

  it('runs as a numeric non-root user under tini, with `tributary <subcommand>` as entrypoint and CMD', () => {
    const user = only(final, 'USER').at(-1)?.args;
    expect(user, 'USER in the final stage').toBeDefined();
    // Numeric, so Kubernetes can verify runAsNonRoot.
    expect(user).toMatch(/^\d+(:\d+)?$/);
    expect(Number(user!.split(':')[0])).toBeGreaterThan(0);

    const installsTini = only(final, 'RUN').some((i) => /apt-get install\b.*\btini\b/.test(i.args));
    expect(installsTini).toBe(true);
    const entrypoint = JSON.parse(only(final, 'ENTRYPOINT').at(-1)!.args) as string[];
    expect(entrypoint).toEqual(['/usr/bin/tini', '--', 'tributary']);
    const cmd = JSON.parse(only(final, 'CMD').at(-1)!.args) as string[];
    expect(['ingress', 'worker', 'dev', 'discord-forwarder']).toContain(cmd[0]);

    // `tributary` on PATH is the CLI's bin, which must be executable with a node shebang.
    const link = only(final, 'RUN').find((i) => /ln -s \S+ \/usr\/local\/bin\/tributary\b/.test(i.args));
    expect(link).toBeDefined();
    const target = /ln -s \/app\/(\S+) /.exec(link!.args)![1]!;
    expect(target).toBe('apps/cli/bin/tributary.js');
    accessSync(join(root, target), constants.X_OK);
    expect(read(target).split('\n')[0]).toBe('#!/usr/bin/env node');
    const bin = JSON.parse(read('apps/cli/package.json')).bin.tributary;
    expect(join('apps/cli', bin)).toBe(target);
  });

  it('adds real agents by build args: npm packages installed as root in a stage of their own, Debian ones beside tini', () => {
    const agents = dockerfile.stages.find((stage) => stage.name === 'agents');
    expect(agents, 'a stage named agents').toBeDefined();
    expect(only(agents!, 'ARG').map((i) => i.args)).toContain('AGENT_NPM_PACKAGES=""');
    // Nothing of the sources reaches that stage, so a source edit does not download the agents again.
    expect(only(agents!, 'COPY')).toEqual([]);
    expect(only(agents!, 'USER')).toEqual([]);
    const install = only(agents!, 'RUN').at(-1)!.args;
    const prefix = /npm install --global --prefix (\S+) /.exec(install)?.[1];
    expect(prefix, 'npm install --global --prefix <dir>').toBeDefined();
    // Installs only when asked: the default image gets an empty folder.
    expect(install).toMatch(/if \[ -n "\$AGENT_NPM_PACKAGES" \]; then .*\$AGENT_NPM_PACKAGES/);

    expect(only(final, 'ARG').map((i) => i.args)).toContain('AGENT_APT_PACKAGES=""');
    const apt = only(final, 'RUN').find((i) => /apt-get install\b.*\btini\b/.test(i.args))!;
    expect(apt.args).toContain('$AGENT_APT_PACKAGES');
    // The agents come last, under root, after the compile step: every layer above is the plain image's.
    const position = (instruction: Instruction | undefined) => final.instructions.indexOf(instruction!);
    const copy = only(final, 'COPY').find((i) => i.args.startsWith('--from=agents '));
    expect(copy?.args).toBe(`--from=agents ${prefix} ${prefix}`);
    const compile = only(final, 'RUN').find((i) => i.args.includes('compile-js.mjs'));
    expect(position(copy)).toBeGreaterThan(position(compile));
    expect(position(copy)).toBeLessThan(position(only(final, 'USER').at(-1)));
    expect(only(final, 'ENV').map((i) => i.args)).toContain(`PATH=${prefix}/bin:$PATH`);
    // The recipe is documented with the build args it takes.
    const docs = read('docs/agents.md');
    for (const arg of ['AGENT_NPM_PACKAGES', 'AGENT_APT_PACKAGES']) expect(docs).toContain(arg);
  });

  it('declares no HEALTHCHECK: probes belong to the orchestrator', () => {
    expect(all.filter((i) => i.keyword === 'HEALTHCHECK')).toEqual([]);
  });
});

/** `.dockerignore` semantics: the last matching pattern wins; a pattern matches a path or a parent. */
function dockerignore(text: string): (path: string) => boolean {
  const rules = text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'))
    .map((line) => {
      const negate = line.startsWith('!');
      const pattern = (negate ? line.slice(1) : line).replace(/^\/+/, '').replace(/\/+$/, '');
      let source = '';
      for (let i = 0; i < pattern.length; i++) {
        const c = pattern[i]!;
        if (c === '*' && pattern[i + 1] === '*') {
          source += pattern[i + 2] === '/' ? '(?:.*/)?' : '.*';
          i += pattern[i + 2] === '/' ? 2 : 1;
        } else if (c === '*') source += '[^/]*';
        else if (c === '?') source += '[^/]';
        else source += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
      }
      return { negate, regex: new RegExp(`^${source}$`) };
    });
  return (path) => {
    const parts = path.split('/');
    let excluded = false;
    for (const rule of rules) {
      for (let n = 1; n <= parts.length; n++) {
        if (rule.regex.test(parts.slice(0, n).join('/'))) {
          excluded = !rule.negate;
          break;
        }
      }
    }
    return excluded;
  };
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (name === 'node_modules') return [];
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

describe('.dockerignore', () => {
  const excluded = dockerignore(read('.dockerignore'));

  it('keeps history, installs, credentials, tests and docs out of the build context', () => {
    for (const path of [
      '.git/HEAD',
      'node_modules/tsx/package.json',
      'apps/worker/node_modules/x/index.js',
      '.env',
      'apps/worker/.env',
      'test/infra/compose.test.ts',
      'apps/worker/test/reply-delivery.test.ts',
      'packages/queue/test/thread-queue.test.ts',
      'packages/queue/test/fixture.ts',
      'docs/adr/0001-typescript-without-a-build-step.md',
      'infra/k8s/base/kustomization.yaml',
      'docker-compose.yml',
    ]) {
      expect(excluded(path), path).toBe(true);
    }
  });

  it('sends every file the image runs: manifests, lockfile, tsconfig and every app and package source', () => {
    for (const path of [
      'package.json',
      'package-lock.json',
      '.npmrc',
      'tsconfig.json',
      'infra/docker/compile-js.mjs',
    ]) {
      expect(excluded(path), path).toBe(false);
    }
    const sources = ['apps', 'packages'].flatMap((group) =>
      readdirSync(join(root, group)).flatMap((name) =>
        ['package.json', 'src', 'bin']
          .map((entry) => join(root, group, name, entry))
          .filter((path) => {
            try {
              statSync(path);
              return true;
            } catch {
              return false;
            }
          })
          .flatMap((path) => (statSync(path).isDirectory() ? filesUnder(path) : [path])),
      ),
    );
    expect(sources.length).toBeGreaterThan(50);
    expect(sources.map((path) => relative(root, path)).filter(excluded)).toEqual([]);
  });
});

describe('workspace dependencies', () => {
  // The image installs only what apps/* declare (and what those declare, transitively), unlike the
  // workspace install, where every package is reachable. An import that is not declared works in
  // the tests and fails in the container, so every package imported at run time must be declared.
  it('every package a source file imports at run time is in its package.json dependencies', () => {
    // The one exception: `tributary dev` loads the test harness, a development dependency, through
    // this file, which turns its absence (the runtime image) into a clear error.
    const DEVELOPMENT_ONLY: Record<string, string> = { 'apps/cli/src/dev-harness.ts': '@tributary/testkit' };
    const undeclared: string[] = [];
    let checked = 0;
    for (const group of ['apps', 'packages']) {
      for (const name of readdirSync(join(root, group))) {
        const dir = join(root, group, name);
        let manifest: { name: string; dependencies?: Record<string, string> };
        try {
          manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
        } catch {
          continue;
        }
        const declared = new Set(Object.keys(manifest.dependencies ?? {}));
        const files = ['src', 'bin'].flatMap((entry) => {
          try {
            return filesUnder(join(dir, entry)).filter((path) => /\.(ts|js)$/.test(path));
          } catch {
            return [];
          }
        });
        for (const file of files) {
          const text = readFileSync(file, 'utf8');
          // Static imports and re-exports (type-only ones are erased), and dynamic imports.
          const pattern =
            /^\s*(?:import|export)\s+(?!type\b)(?:[^'"]*?\sfrom\s+)?['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)/gm;
          for (const match of text.matchAll(pattern)) {
            const specifier = (match[1] ?? match[2])!;
            if (specifier.startsWith('.') || specifier.startsWith('node:')) continue;
            const parts = specifier.split('/');
            const pkg = specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!;
            if (builtinModules.includes(pkg)) continue;
            checked++;
            if (DEVELOPMENT_ONLY[relative(root, file)] === pkg) continue;
            if (pkg !== manifest.name && !declared.has(pkg)) {
              undeclared.push(`${relative(root, file)} imports ${pkg}, not in ${manifest.name} dependencies`);
            }
          }
        }
      }
    }
    expect(checked).toBeGreaterThan(20);
    expect(undeclared).toEqual([]);
  });
});
