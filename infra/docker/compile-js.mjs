// Compiles the workspaces' TypeScript sources to JavaScript in place, for the image (docs/adr/0021):
// every apps/*/src and packages/*/src .ts file becomes a .js file beside it and is removed, and each
// workspace's package.json points at the .js files. Imports already name `.js` files (NodeNext), and
// assets read relative to a module (the queue's Lua scripts) stay where they are.
//   node infra/docker/compile-js.mjs <root>
// Plain JavaScript on purpose: it runs in the image build, where only runtime dependencies exist.
// esbuild (tsx's transpiler, already a runtime dependency) strips types file by file; type checking is
// `npm run check`'s job, and verbatimModuleSyntax guarantees that dropping types drops no value import.
import { readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { transformSync } from 'esbuild';

const root = process.argv[2];
if (!root) throw new Error('usage: node infra/docker/compile-js.mjs <root>');
const target = `node${process.versions.node.split('.')[0]}`;

function* typescriptFiles(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yield* typescriptFiles(path);
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) yield path;
  }
}

const toJs = (path) => path.replace(/\.ts$/, '.js');
let files = 0;
for (const group of ['apps', 'packages']) {
  for (const name of readdirSync(join(root, group))) {
    const workspace = join(root, group, name);
    const manifestPath = join(workspace, 'package.json');
    let manifest;
    try {
      manifest = JSON.parse(readFileSync(manifestPath, 'utf8'));
    } catch {
      continue;
    }
    for (const file of typescriptFiles(join(workspace, 'src'))) {
      const { code } = transformSync(readFileSync(file, 'utf8'), {
        loader: 'ts',
        format: 'esm',
        target,
        sourcefile: file,
      });
      writeFileSync(toJs(file), code);
      rmSync(file);
      files += 1;
    }
    if (manifest.exports) {
      manifest.exports = Object.fromEntries(
        Object.entries(manifest.exports).map(([key, value]) => [key, toJs(value)]),
      );
      writeFileSync(manifestPath, `${JSON.stringify(manifest, null, 2)}\n`);
    }
  }
}
process.stdout.write(`compiled ${files} files to JavaScript for ${target}\n`);
