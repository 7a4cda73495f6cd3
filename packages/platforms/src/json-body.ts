import { InvalidWebhookError } from './inbound.js';

type JsonObject = Record<string, unknown>;

// Malformed UTF-8 is refused rather than replaced, so no byte the platform sent is silently altered.
const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** The raw body as a JSON object; anything else is InvalidWebhookError. */
export function readJsonBody(raw: Buffer): JsonFields {
  return JsonFields.of(parseJsonBody(raw), '');
}

/** The raw body as JSON of any shape. */
export function parseJsonBody(raw: Buffer): unknown {
  let text: string;
  try {
    text = UTF8.decode(raw);
  } catch {
    throw new InvalidWebhookError('body is not valid UTF-8');
  }
  try {
    return JSON.parse(text);
  } catch {
    // Also a nesting so deep that the parser overflows the stack.
    throw new InvalidWebhookError('body is not JSON');
  }
}

/**
 * Typed reads from untrusted JSON. Each failed read throws InvalidWebhookError naming the field by its
 * path (`event.files[2].name`), so a 400 says exactly what is wrong. JSON `null` counts as absent.
 */
export class JsonFields {
  private constructor(
    private readonly value: JsonObject,
    /** '' at the root of the body. */
    readonly path: string,
  ) {}

  static of(value: unknown, path: string): JsonFields {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      throw new InvalidWebhookError(`${path || 'body'} must be a JSON object`);
    }
    return new JsonFields(value as JsonObject, path);
  }

  /** The same object with `fields` set over its own, read under the same path. */
  with(fields: Record<string, unknown>): JsonFields {
    return new JsonFields({ ...this.value, ...fields }, this.path);
  }

  field(key: string): string {
    return this.path === '' ? key : `${this.path}.${key}`;
  }

  keys(): string[] {
    return Object.keys(this.value).filter((key) => this.has(key));
  }

  has(key: string): boolean {
    return this.get(key) !== undefined;
  }

  string(key: string): string {
    return checkedString(this.required(key), this.field(key));
  }

  optionalString(key: string): string | undefined {
    const value = this.get(key);
    return value === undefined ? undefined : checkedString(value, this.field(key));
  }

  nonEmptyString(key: string): string {
    const text = this.string(key);
    if (text === '') throw new InvalidWebhookError(`${this.field(key)} must not be empty`);
    return text;
  }

  integer(key: string): number {
    const value = this.required(key);
    if (!Number.isSafeInteger(value)) throw new InvalidWebhookError(`${this.field(key)} must be an integer`);
    return value as number;
  }

  optionalInteger(key: string): number | undefined {
    return this.has(key) ? this.integer(key) : undefined;
  }

  optionalBoolean(key: string): boolean | undefined {
    const value = this.get(key);
    if (value !== undefined && typeof value !== 'boolean') {
      throw new InvalidWebhookError(`${this.field(key)} must be a boolean`);
    }
    return value;
  }

  boolean(key: string): boolean {
    this.required(key);
    return this.optionalBoolean(key)!;
  }

  object(key: string): JsonFields {
    return JsonFields.of(this.required(key), this.field(key));
  }

  optionalObject(key: string): JsonFields | undefined {
    return this.has(key) ? this.object(key) : undefined;
  }

  /** An array of objects; absent is empty. */
  objects(key: string): JsonFields[] {
    return this.array(key).map((item, index) => JsonFields.of(item, `${this.field(key)}[${index}]`));
  }

  /** An array of strings; absent is empty. */
  strings(key: string): string[] {
    return this.array(key).map((item, index) => checkedString(item, `${this.field(key)}[${index}]`));
  }

  private array(key: string): unknown[] {
    const value = this.get(key);
    if (value === undefined) return [];
    if (!Array.isArray(value)) throw new InvalidWebhookError(`${this.field(key)} must be an array`);
    return value;
  }

  private required(key: string): unknown {
    const value = this.get(key);
    if (value === undefined) throw new InvalidWebhookError(`${this.field(key)} is missing`);
    return value;
  }

  private get(key: string): unknown {
    // Own properties only: a body without `constructor` must not read Object.prototype's.
    const value = Object.hasOwn(this.value, key) ? this.value[key] : undefined;
    return value === null ? undefined : value;
  }
}

function checkedString(value: unknown, field: string): string {
  if (typeof value !== 'string') throw new InvalidWebhookError(`${field} must be a string`);
  // A lone surrogate cannot be encoded as UTF-8: it would corrupt keys and events downstream.
  if (!value.isWellFormed()) {
    throw new InvalidWebhookError(`${field} must be well-formed Unicode (it has a lone surrogate)`);
  }
  return value;
}

/** Drops keys whose value is undefined, so optional fields are absent rather than present-but-undefined. */
export function compact<T extends object>(value: T): T {
  const kept: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) if (item !== undefined) kept[key] = item;
  return kept as T;
}
