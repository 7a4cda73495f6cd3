import { createHash } from 'node:crypto';
import { isAbsolute, join, resolve } from 'node:path';
import { ConfigError } from './config-error.js';

const PLACEHOLDER = /\{([^{}]*)\}/g;
const PLACEHOLDERS = ['platform', 'channel', 'thread'] as const;
type Placeholder = (typeof PLACEHOLDERS)[number];

/** A segment longer than this is cut and suffixed with a hash of the whole, to stay a valid file name. */
const MAX_SEGMENT = 96;

/**
 * One path segment from any text: letters, digits, `-` and `.` stay, every other byte becomes `_xx`
 * (hex), so distinct values give distinct segments. A leading dot is escaped too (no `.`, `..` or
 * hidden directories) and the empty text is `_`; no result contains a separator.
 */
export function safeSegment(value: string): string {
  if (value === '') return '_';
  let out = '';
  for (const byte of Buffer.from(value, 'utf8')) {
    const char = String.fromCharCode(byte);
    const plain = /[A-Za-z0-9-]/.test(char) || (char === '.' && out !== '');
    out += plain ? char : `_${byte.toString(16).padStart(2, '0')}`;
  }
  if (out.length <= MAX_SEGMENT) return out;
  const hash = createHash('sha256').update(value).digest('hex').slice(0, 16);
  return `${out.slice(0, MAX_SEGMENT - 17)}-${hash}`;
}

/**
 * The parts of a thread key (`<platform>:<channel…>:<thread>`): the first part, the last, and what lies
 * between. A key with fewer parts uses its last part for what is missing (`discord:<channel>` is its own
 * thread).
 */
export function conversationParts(threadKey: string): Record<Placeholder, string> {
  const parts = threadKey.split(':');
  const platform = parts.length > 1 ? parts[0]! : '';
  const thread = parts.at(-1)!;
  const channel = parts.length > 2 ? parts.slice(1, -1).join(':') : thread;
  return { platform, channel, thread };
}

/** Checks an `AGENT_CWD` template: known placeholders only, an absolute result (relative to `cwd`). */
export function readCwdTemplate(name: string, template: string, cwd: string): string {
  for (const [, placeholder] of template.matchAll(PLACEHOLDER)) {
    if (!(PLACEHOLDERS as readonly string[]).includes(placeholder!)) {
      throw new ConfigError(
        name,
        `unknown placeholder {${placeholder}}; use ${PLACEHOLDERS.map((p) => `{${p}}`).join(', ')}`,
      );
    }
  }
  return isAbsolute(template) ? template : join(resolve(cwd), template);
}

/** Whether the template names this placeholder, or any when none is given. */
export function hasPlaceholder(template: string, placeholder?: Placeholder): boolean {
  return (placeholder ? [placeholder] : PLACEHOLDERS).some((name) => template.includes(`{${name}}`));
}

/** The directory of a thread under a template; each placeholder becomes one safe path segment. */
export function expandCwdTemplate(template: string, threadKey: string): string {
  const parts = conversationParts(threadKey);
  return template.replace(PLACEHOLDER, (_, placeholder: Placeholder) => safeSegment(parts[placeholder]));
}

/** The fixed directory a template's paths start in: where agent processes start before they take a thread. */
export function cwdTemplateRoot(template: string): string {
  const index = template.indexOf('{');
  if (index < 0) return template;
  const cut = template.lastIndexOf('/', index);
  return cut <= 0 ? '/' : template.slice(0, cut);
}
