import { ConfigError } from './config-error.js';

export type Env = Readonly<Record<string, string | undefined>>;

/** Readers for one environment variable each; an empty string counts as unset. */
export function readString(env: Env, name: string, fallback: string): string {
  const value = env[name];
  return value === undefined || value === '' ? fallback : value;
}

export function readOptional(env: Env, name: string): string | undefined {
  const value = env[name];
  return value === undefined || value === '' ? undefined : value;
}

/** A bearer token: unset, or long enough not to be guessed. */
export function readToken(env: Env, name: string): string | undefined {
  const token = readOptional(env, name);
  if (token !== undefined) checkTokenLength(name, token);
  return token;
}

const MIN_TOKEN_LENGTH = 16;

/** A bearer token must be long enough not to be guessed. */
export function checkTokenLength(variable: string, token: string): void {
  if (token.length < MIN_TOKEN_LENGTH) {
    throw new ConfigError(
      variable,
      `tokens must be at least ${MIN_TOKEN_LENGTH} characters; generate one with \`openssl rand -hex 24\``,
    );
  }
}

/** `what` says what the variable is for, so the error tells the operator what to fill in. */
export function readRequired(env: Env, name: string, what: string): string {
  const value = readOptional(env, name);
  if (value === undefined) throw new ConfigError(name, `is required (${what})`);
  return value;
}

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export function readLogLevel(env: Env): LogLevel {
  return readChoice(env, 'LOG_LEVEL', LOG_LEVELS, 'info');
}

export function readInteger(
  env: Env,
  name: string,
  fallback: number,
  min = 1,
  max = Number.MAX_SAFE_INTEGER,
): number {
  const raw = readOptional(env, name);
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(name, `must be a whole number, got ${JSON.stringify(raw)}`);
  const value = Number(raw);
  if (value < min || value > max)
    throw new ConfigError(name, `must be between ${min} and ${max}, got ${value}`);
  return value;
}

export function readChoice<T extends string>(env: Env, name: string, choices: readonly T[], fallback: T): T {
  const raw = readString(env, name, fallback);
  if (!(choices as readonly string[]).includes(raw)) {
    throw new ConfigError(name, `must be one of ${choices.join(', ')}, got ${JSON.stringify(raw)}`);
  }
  return raw as T;
}

export function readUrl(env: Env, name: string, protocols: readonly string[]): string | undefined {
  const raw = readOptional(env, name);
  if (raw === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(name, 'must be an absolute URL');
  }
  if (!protocols.includes(url.protocol)) {
    throw new ConfigError(name, `must use ${protocols.join(' or ')}, got ${url.protocol}`);
  }
  return raw;
}

/**
 * Splits a command line into words the way a POSIX shell would for plain words, single and double
 * quotes and backslash escapes; no expansion of any kind.
 */
export function splitCommandLine(name: string, line: string): string[] {
  const words: string[] = [];
  let word = '';
  let inWord = false;
  let quote: "'" | '"' | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote) {
      if (c === quote) quote = undefined;
      else if (c === '\\' && quote === '"' && i + 1 < line.length) word += line[++i];
      else word += c;
    } else if (c === "'" || c === '"') {
      quote = c;
      inWord = true;
    } else if (c === '\\' && i + 1 < line.length) {
      word += line[++i];
      inWord = true;
    } else if (/\s/.test(c)) {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
    } else {
      word += c;
      inWord = true;
    }
  }
  if (quote) throw new ConfigError(name, `unterminated ${quote} quote`);
  if (inWord) words.push(word);
  if (words.length === 0) throw new ConfigError(name, 'must name a command');
  return words;
}
