/** What replaces a secret in text that leaves the process (logs, Redis, notices). */
export const SCRUBBED = '[redacted]';

/**
 * Credential shapes that are unmistakable on their own: provider key prefixes, bearer tokens, JWTs, and
 * the value after a secret-sounding name (`api_key=…`, `"token": "…"`, `x-api-key: …`). The first group
 * of a pattern, when it has one, is kept: it is the name, not the secret.
 */
const SHAPES: readonly RegExp[] = [
  // Anthropic (sk-ant-…), OpenAI (sk-…, sk-proj-…) and other `sk-` keys.
  /\bsk-[A-Za-z0-9_-]{16,}/g,
  // Google API keys.
  /\bAIza[0-9A-Za-z_-]{30,}/g,
  // GitHub tokens.
  /\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})/g,
  // Slack tokens.
  /\bxox[abeprs]-[A-Za-z0-9-]{10,}/g,
  // AWS access key ids.
  /\bAKIA[0-9A-Z]{16}\b/g,
  // Telegram bot tokens, also inside its file URLs (`/file/bot<token>/…`).
  /(?<![0-9])\d{6,12}:[A-Za-z0-9_-]{30,}/g,
  // JSON Web Tokens.
  /\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g,
  // Authorization schemes.
  /(\b(?:Bearer|Basic|Token)\s+)[A-Za-z0-9._~+/=-]{8,}/gi,
  // Passwords in URLs (redis://user:pass@host).
  /(\b[a-z][a-z0-9+.-]*:\/\/[^\s:/@]*:)[^\s@/]+(?=@)/gi,
  // name=value / name: value / "name": "value" for names that say they hold a secret.
  /((?:api[_-]?key|secret|token|passw(?:or)?d|credential|authorization|private[_-]?key)[A-Za-z0-9_-]*["']?\s*[:=]\s*["']?)(?!\[redacted\]|(?:Bearer|Basic|Token)\s)[^\s"',;]{6,}/gi,
];

/** Known secret values shorter than this are not scrubbed: they would blank common words. */
export const MIN_KNOWN_SECRET_LENGTH = 8;

/** How far past the shown start a streamed text is read, so a credential shape that starts there matches. */
const SHAPE_ROOM = 1024;

/**
 * Removes credentials from text an agent (or anyone outside the broker) produced, before that text is
 * logged, stored or shown: the secret values it is given (what the operator handed the agent, a
 * worker's own credentials), and anything shaped like a credential. Scrubbing is one-way and errs on
 * the side of blanking too much.
 */
export class SecretScrubber {
  readonly #known: readonly string[];

  constructor(knownSecrets: Iterable<string> = []) {
    // Longest first, so a secret that contains another is blanked whole.
    this.#known = [...new Set(knownSecrets)]
      .filter((value) => value.length >= MIN_KNOWN_SECRET_LENGTH)
      .sort((a, b) => b.length - a.length);
  }

  scrub(text: string): string {
    let out = text;
    for (const value of this.#known) out = out.replaceAll(value, SCRUBBED);
    for (const shape of SHAPES) {
      out = out.replace(shape, (...match: unknown[]) => {
        const kept = typeof match[1] === 'string' ? match[1] : '';
        return `${kept}${SCRUBBED}`;
      });
    }
    return out;
  }

  /**
   * The scrubbed start, at most `max` characters, of a text still being written (a reply streaming
   * in). A known secret may arrive split across two chunks, so an ending that could be the start of
   * one is held back until the rest shows what it is. Only the start is read: a long text costs no
   * more than a short one.
   */
  scrubStreamed(text: string, max: number): string {
    // Long enough that a known secret starting before `max` lies in it whole.
    const room = max + (this.#known[0]?.length ?? 0) + SHAPE_ROOM;
    const head = text.length > room ? text.slice(0, room) : text;
    return this.scrub(head.slice(0, head.length - this.#unfinished(head))).slice(0, max);
  }

  /** The length of the longest ending of `text` that is the start, not the whole, of a known secret. */
  #unfinished(text: string): number {
    let longest = 0;
    for (const secret of this.#known) {
      for (let length = Math.min(secret.length - 1, text.length); length > longest; length--) {
        if (text.endsWith(secret.slice(0, length))) {
          longest = length;
          break;
        }
      }
    }
    return longest;
  }
}
