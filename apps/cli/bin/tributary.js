#!/usr/bin/env node
// The compiled JavaScript when there is some (the image compiles the sources, docs/adr/0021), else the
// TypeScript sources through tsx (no build step in development, docs/adr/0001).
import { existsSync } from 'node:fs';

const compiled = new URL('../src/main.js', import.meta.url);
if (existsSync(compiled)) {
  await import(compiled.href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/main.ts');
}
