import { countTokens as countO200kTokens } from 'gpt-tokenizer/encoding/o200k_base';
import type { ArrivalEvent } from './arrival-event.js';
import { senderContextBlockText } from './sender-context.js';

/**
 * What one image, audio clip or link is assumed to cost. Models do not tokenize media as text; 1,600 is
 * what Anthropic charges for an image at its 1.15-megapixel size cap ((width × height) / 750). A link
 * costs far less, and that is fine: the estimate only paces batches, so overestimating ends a batch a
 * little early and never truncates anything.
 */
export const NON_TEXT_BLOCK_TOKENS = 1600;

/**
 * The longest stretch the BPE is handed without a place where it may split (docs/adr/0012). Its merge
 * loop is quadratic in the length of one pre-token, and a word, a run of blanks or of punctuation is
 * one pre-token however long; longer stretches are cut, which adds at most a token per cut.
 */
export const MAX_PIECE_CHARS = 256;

/**
 * Characters of BPE work one count may do (docs/adr/0012): a text up to this long is counted, a longer
 * one estimated from evenly spread samples of this many characters in all.
 */
export const TOKEN_COUNT_BUDGET_CHARS = 16_384;
const SAMPLES = 64;
/** Below this much budget left, a meter stops sampling and uses the rate it has seen. */
const MIN_SAMPLE_CHARS = 1024;

// A user may type '<|endoftext|>'; to us it is text, and the tokenizer would otherwise throw on it.
const PLAIN_TEXT = { disallowedSpecial: new Set<string>() };

/**
 * BPE tokens in o200k_base (GPT-4o and later); other models' counts differ, but not by much. Exact for
 * text up to TOKEN_COUNT_BUDGET_CHARS whose words and blank runs are at most MAX_PIECE_CHARS long;
 * within about a percent otherwise; linear in the text's length, and bounded beyond the budget.
 */
export function countTokens(text: string): number {
  return new TokenMeter().count(text);
}

/** Tokens of the event's <sender_context> block: the fixed cost of the envelope, per event. */
export function envelopeTokens(event: ArrivalEvent): number {
  return new TokenMeter().countEnvelope(event);
}

/**
 * Envelopes remembered by shape: the block with the timestamp's digits zeroed. The pre-tokenizer
 * splits digit runs into pieces of at most three digits that are one token each whatever the digits,
 * so envelopes of one shape (a sender, in a channel and thread) have one count; counting each event's
 * envelope again was most of ingress's BPE work. Bounded: the map starts over when full.
 */
const envelopeMemo = new Map<string, number>();
const ENVELOPE_MEMO_ENTRIES = 10_000;

function envelopeShape(event: ArrivalEvent): string {
  return senderContextBlockText({ ...event, timestamp: event.timestamp.replace(/[0-9]/g, '0') });
}

/**
 * What the event adds to a prompt, for the batch token cap: the tokens of its envelope, prompt and text
 * attachments, plus the fixed estimate per other attachment. It ignores the agent's capabilities and the
 * few tokens of attachment URIs, so ingress can compute it once per event. All texts share one budget,
 * so an event costs at most TOKEN_COUNT_BUDGET_CHARS of BPE work however many attachments it has.
 */
export function eventTokens(event: ArrivalEvent): number {
  const meter = new TokenMeter();
  let tokens = meter.countEnvelope(event) + meter.count(event.text);
  for (const attachment of event.attachments) {
    tokens += attachment.kind === 'text' ? meter.count(attachment.text) : NON_TEXT_BLOCK_TOKENS;
  }
  return tokens;
}

/**
 * Counts texts against one budget of BPE work: a text that fits what is left is counted; a longer one
 * is estimated from samples as large as what is left; once the budget is spent, texts are estimated at
 * the rate (tokens per character) counted so far.
 */
export class TokenMeter {
  private countedChars = 0;
  private countedTokens = 0;

  constructor(private readonly budgetChars = TOKEN_COUNT_BUDGET_CHARS) {}

  /** Characters handed to the BPE so far: at most the budget, or MIN_SAMPLE_CHARS if that is more. */
  get spentChars(): number {
    return this.countedChars;
  }

  count(text: string): number {
    const left = this.budgetChars - this.countedChars;
    if (text.length <= left) return this.record(text.length, bpeTokens(text, 0, text.length));
    if (left >= MIN_SAMPLE_CHARS || this.countedChars === 0) {
      const sample = sampleTokens(text, Math.max(left, MIN_SAMPLE_CHARS));
      this.record(sample.chars, sample.tokens);
      return estimate(text.length, sample.tokens / sample.chars);
    }
    return estimate(text.length, this.countedTokens / this.countedChars);
  }

  /** The event's <sender_context> block, counted once per shape (see envelopeMemo). */
  countEnvelope(event: ArrivalEvent): number {
    const shape = envelopeShape(event);
    const known = envelopeMemo.get(shape);
    if (known !== undefined) return this.record(shape.length, known);
    const tokens = this.count(senderContextBlockText(event));
    if (envelopeMemo.size >= ENVELOPE_MEMO_ENTRIES) envelopeMemo.clear();
    envelopeMemo.set(shape, tokens);
    return tokens;
  }

  private record(chars: number, tokens: number): number {
    this.countedChars += chars;
    this.countedTokens += tokens;
    return tokens;
  }
}

function estimate(chars: number, tokensPerChar: number): number {
  return Math.max(1, Math.round(chars * tokensPerChar));
}

/** Tokens of SAMPLES windows spread evenly over `text`, at most `budget` characters in all. */
function sampleTokens(text: string, budget: number): { chars: number; tokens: number } {
  const width = Math.floor(budget / SAMPLES);
  const slack = width >> 2;
  let chars = 0;
  let tokens = 0;
  for (let i = 0; i < SAMPLES; i++) {
    const at = Math.floor((i * (text.length - width)) / (SAMPLES - 1));
    // Both ends where a pre-token starts, when there is one near: the window is then counted exactly.
    const start = pieceStartIn(text, at, Math.min(text.length, at + slack), 1) ?? at;
    const limit = Math.min(text.length, start + width);
    const end = limit === text.length ? limit : (pieceStartIn(text, limit, limit - slack, -1) ?? limit);
    chars += end - start;
    tokens += bpeTokens(text, start, end);
  }
  return { chars, tokens };
}

/** The first pre-token start from `from` towards `to` (excluded), stepping by `step`. */
function pieceStartIn(text: string, from: number, to: number, step: 1 | -1): number | undefined {
  for (let i = from; step > 0 ? i < to : i > to; i += step) if (isPieceStart(text, i)) return i;
  return undefined;
}

/**
 * The stretches of text[start, end) handed to the BPE one by one: cut only where a stretch without a
 * pre-token start reaches MAX_PIECE_CHARS. Text without such stretches is one piece, counted exactly.
 */
export function bpePieces(text: string, start = 0, end = text.length): [number, number][] {
  const pieces: [number, number][] = [];
  let pieceStart = start;
  let lastStart = start;
  for (let i = start + 1; i < end; i++) {
    if (isPieceStart(text, i)) {
      lastStart = i;
    } else if (i - lastStart >= MAX_PIECE_CHARS && !isLowSurrogate(text.charCodeAt(i))) {
      pieces.push([pieceStart, i]);
      pieceStart = i;
      lastStart = i;
    }
  }
  if (end > pieceStart) pieces.push([pieceStart, end]);
  return pieces;
}

function bpeTokens(text: string, start: number, end: number): number {
  let tokens = 0;
  for (const [from, to] of bpePieces(text, start, end)) {
    tokens += countO200kTokens(from === 0 && to === text.length ? text : text.slice(from, to), PLAIN_TEXT);
  }
  return tokens;
}

/**
 * True where o200k_base's pre-tokenizer always starts a pre-token: at a space or tab after a character
 * that is not white space. No pre-token has a blank after anything but white space, so splitting the
 * text there gives the same pre-tokens, and the same count, as counting it whole.
 */
function isPieceStart(text: string, i: number): boolean {
  const code = text.charCodeAt(i);
  return (code === 0x20 || code === 0x09) && !isWhiteSpace(text.charCodeAt(i - 1));
}

/** JavaScript's `\s`. */
function isWhiteSpace(code: number): boolean {
  if (code <= 0x20) return code === 0x20 || (code >= 0x09 && code <= 0x0d);
  if (code < 0xa0) return false;
  return (
    code === 0xa0 ||
    code === 0x1680 ||
    (code >= 0x2000 && code <= 0x200a) ||
    code === 0x2028 ||
    code === 0x2029 ||
    code === 0x202f ||
    code === 0x205f ||
    code === 0x3000 ||
    code === 0xfeff
  );
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}
