#!/usr/bin/env node
// Runs the TypeScript sources directly (no build step, see docs/adr/0001).
import { register } from 'tsx/esm/api';

register();
await import('../src/main.ts');
