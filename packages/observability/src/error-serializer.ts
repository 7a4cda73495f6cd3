import { stdSerializers } from 'pino';

const CENSORED = '[redacted]';

/**
 * How a log line shows an error: pino's standard form, less the arguments of any Redis command the
 * error carries. ioredis hangs the command that failed on its error, arguments and all: a refused
 * AUTH or HELLO carries the password the client sent, a CONFIG SET the new one, a script call the
 * text of a message. The command's name is what a reader needs, so whatever the command its arguments
 * go, at any depth pino writes (a Cluster's `lastNodeError`, an AggregateError's errors).
 */
export function serializeError(value: unknown): unknown {
  if (!(value instanceof Error)) return value;
  const serialized = stdSerializers.err(value);
  censorCommands(serialized, Object.getPrototypeOf(serialized));
  return serialized;
}

/**
 * A log object with every error in it written as serializeError writes it, under whatever name it
 * was logged (pino applies its `err` serializer to `err` alone, and an error under another name
 * would go out as its enumerable fields: the command's arguments without even the message).
 */
export function serializeErrors(fields: Record<string, unknown>): Record<string, unknown> {
  let out = fields;
  for (const [key, value] of Object.entries(fields)) {
    if (!(value instanceof Error)) continue;
    if (out === fields) out = { ...fields };
    out[key] = serializeError(value);
  }
  return out;
}

/** `serialized` and the errors pino serialized inside it are its own copies, so they are changed in place. */
function censorCommands(serialized: Record<string, unknown>, errorProto: object): void {
  const { command } = serialized;
  if (typeof command === 'object' && command !== null && 'args' in command) {
    serialized.command = { ...command, args: CENSORED };
  }
  for (const value of Object.values(serialized)) {
    for (const inner of Array.isArray(value) ? value : [value]) {
      if (typeof inner === 'object' && inner !== null && Object.getPrototypeOf(inner) === errorProto) {
        censorCommands(inner, errorProto);
      }
    }
  }
}
