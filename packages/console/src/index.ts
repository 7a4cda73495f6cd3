import { fileURLToPath } from 'node:url';

/**
 * The folder of the console's files, served as they are: plain ES modules, a stylesheet and one HTML
 * page, no build step and no framework (docs/adr/0029-operator-console-without-a-build.md).
 */
export const CONSOLE_ROOT = fileURLToPath(new URL('../public/', import.meta.url));

/**
 * The console's Content-Security-Policy: its own scripts, styles and API only; no inline script or
 * style, no framing, no form posts, no other origin. The admin listener sends it with every answer.
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');
