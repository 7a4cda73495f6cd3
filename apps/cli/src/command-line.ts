import { type ParseArgsConfig, parseArgs } from 'node:util';

/** A mistake in how a command was called: main prints it with the command's usage and exits 2. */
export class UsageError extends Error {}

/** A subcommand: what it runs with the arguments after its name (its usage is in usages.ts). */
export interface Command {
  run(argv: string[]): Promise<void>;
}

type Options = NonNullable<ParseArgsConfig['options']>;

/**
 * node:util parseArgs in strict mode, its errors (an unknown flag, a flag without its value, a stray
 * argument) turned into usage errors: a flag the command does not know never passes unnoticed.
 */
export function parseCommandArgs<T extends Options>(argv: string[], options: T, allowPositionals = false) {
  try {
    return parseArgs({ args: argv, options, allowPositionals, strict: true });
  } catch (error) {
    if ((error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      throw new UsageError((error as Error).message);
    }
    throw error;
  }
}

/**
 * For the long-running commands, configured by environment variables only: any argument is refused,
 * since `tributary ingress --port 9999` quietly serving on another port is worse than not starting.
 */
export function refuseArguments(command: string, argv: string[]): void {
  const [first] = argv;
  if (first === undefined) return;
  throw new UsageError(
    `unexpected argument '${first}': \`tributary ${command}\` takes no options; ` +
      'it is configured by environment variables',
  );
}

/** A flag holding a whole number of milliseconds or similar, > 0. */
export function positiveInteger(flag: string, value: string): number {
  const number = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(number) || number <= 0) {
    throw new UsageError(`--${flag} must be a positive integer, got '${value}'`);
  }
  return number;
}
