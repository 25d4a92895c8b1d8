/**
 * Turtle, TriG, N-Triples and N-Quads: N3's push parser, fed chunk by chunk (memory stays flat:
 * at most one ~64 KiB slice of text plus the quads it produced are held at a time), with error
 * positions recovered from the lexer (and oxigraph's word on a bad N-Triples/N-Quads line).
 */
import { isUtf8 } from 'node:buffer';
import N3 from 'n3';
import { formatByName } from '../formats.js';
import { makeN3TermConverter, type NtQuad, type RdfJsTermLike, UnsupportedTermError } from '../nt.js';
import { parseOxigraphMessage, RdfSyntaxError } from './errors.js';
import { DEFAULT_BATCH, type ParseRdfOptions } from './options.js';
import { makeFastLineReader } from './nt-fast.js';
import { runParseWorkerJob } from './worker-pool.js';

/** Text is handed to N3 in slices of at most this many characters. */
const SLICE = 64 * 1024;

const N3_FORMAT = { turtle: 'Turtle', trig: 'TriG', ntriples: 'N-Triples', nquads: 'N-Quads' } as const;
/** Lines longer than this are left to N3 (a canonical line is far shorter in practice). */
const MAX_FAST_LINE = 1024 * 1024;
/** The N3 parser's states between two statements (its `_readCallback`). */
const N3_PARSER = N3.Parser.prototype as unknown as Record<string, unknown>;
const N3_TOP_CONTEXT = N3_PARSER._readInTopContext;
const N3_BEFORE_TOP_CONTEXT = N3_PARSER._readBeforeTopContext;
/** N3 prefixes blank node labels written in the file with this; `=` never starts a label N3 invents. */
const N3_NAMED = '=';

interface N3Token { line?: number; endLine?: number; start?: number; end?: number }
interface N3ErrorContext { line?: number; token?: N3Token; previousToken?: N3Token }
interface N3LexerInternals { _line?: number; _linePosition?: number; _input?: string | null; previousToken?: N3Token }
interface N3Quad { subject: RdfJsTermLike; predicate: RdfJsTermLike; object: RdfJsTermLike; graph: RdfJsTermLike }

/** Text the lexer had not yet consumed when a slice was fed, and where it starts. */
interface Snapshot { line: number; column0: number; text: string }

export async function* parseWithN3(input: AsyncIterable<Buffer | Uint8Array | string>, options: ParseRdfOptions): AsyncGenerator<NtQuad[]> {
  const name = options.format.name as keyof typeof N3_FORMAT;
  const batchSize = options.batchSize ?? DEFAULT_BATCH;
  const parser = new N3.Parser({ format: N3_FORMAT[name], baseIRI: options.baseIRI, blankNodePrefix: N3_NAMED });
  const lexer = (parser as unknown as { _lexer: N3LexerInternals })._lexer;
  const term = makeN3TermConverter(options.blankNodePrefix, N3_NAMED);
  const keepGraph = options.format.quads;
  const byteStrings = options.byteStrings === true && (name === 'ntriples' || name === 'nquads');

  let batch: NtQuad[] = [];
  const ready: NtQuad[][] = [];
  let failure: unknown = null;
  let onData: (chunk: string) => void = () => undefined;
  let onEnd: () => void = () => undefined;
  let snapshot: Snapshot = { line: 1, column0: 0, text: '' };

  let lastSubjectTerm: RdfJsTermLike | null = null;
  let lastSubject = '';
  let lastPredicateTerm: RdfJsTermLike | null = null;
  let lastPredicate = '';
  let lastGraphTerm: RdfJsTermLike | null = null;
  let lastGraph: string | null = null;
  const onQuad = (error: Error | null, quad: N3Quad | null): void => {
    if (failure !== null) return;
    if (error) {
      failure = error;
      return;
    }
    if (!quad) return;
    try {
      const g = quad.graph;
      // Turtle repeats the very same subject term object over `;` lists, and the same predicate
      // over `,` lists, TriG the same graph over a block: convert each once.
      if (quad.subject !== lastSubjectTerm) {
        lastSubject = term(quad.subject);
        lastSubjectTerm = quad.subject;
      }
      if (quad.predicate !== lastPredicateTerm) {
        lastPredicate = term(quad.predicate);
        lastPredicateTerm = quad.predicate;
      }
      if (g !== lastGraphTerm) {
        lastGraph = keepGraph && g.termType !== 'DefaultGraph' ? term(g) : null;
        lastGraphTerm = g;
      }
      const graph = lastGraph;
      if (byteStrings) {
        // Lines N3 read are rare in this mode: its terms become byte strings like the fast path's.
        batch.push({ subject: toBytes(lastSubject), predicate: toBytes(lastPredicate), object: toBytes(term(quad.object)), graph: graph === null ? null : toBytes(graph) });
      } else batch.push({ subject: lastSubject, predicate: lastPredicate, object: term(quad.object), graph });
    } catch (e) {
      failure = e;
      return;
    }
    if (batch.length >= batchSize) {
      ready.push(batch);
      batch = [];
    }
  };

  // N3's push interface: parse() registers `data`/`end` callbacks on a stream-like object.
  (parser as unknown as { parse(stream: unknown, callbacks: unknown): void }).parse(
    {
      on(event: string, callback: (arg?: unknown) => void) {
        if (event === 'data') onData = callback as (chunk: string) => void;
        else if (event === 'end') onEnd = callback as () => void;
      },
    },
    { onQuad },
  );

  // Before each slice, remember the text the lexer still has to read, prefixed with the already
  // consumed start of its first line (taken from the previous snapshot), so that on an error the
  // whole failing line is at hand. Only string slicing: no scanning on the success path.
  const takeSnapshot = (next: string): void => {
    const pending = typeof lexer._input === 'string' ? lexer._input : '';
    const line = lexer._line ?? 1;
    let column0 = pending || snapshot.text ? (lexer._linePosition ?? 0) : 0;
    let head = '';
    if (column0 > 0) {
      const consumedEnd = snapshot.text.length - pending.length;
      const start = consumedEnd - column0;
      if (start >= 0 && snapshot.text.endsWith(pending)) {
        const candidate = snapshot.text.slice(start, consumedEnd);
        if (!candidate.includes('\n')) {
          head = candidate;
          column0 = 0;
        }
      }
    }
    snapshot = { line, column0, text: head + pending + next };
  };
  const fail = async (): Promise<never> => {
    throw await toSyntaxErrorN3(failure, snapshot, lexer, options);
  };

  /** Feeds text to N3 in slices; false when N3 failed. */
  const feed = (text: string): boolean => {
    for (let i = 0; i < text.length; i += SLICE) {
      const slice = text.length <= SLICE ? text : text.slice(i, i + SLICE);
      takeSnapshot(slice);
      onData(slice);
      if (failure !== null) return false;
    }
    return true;
  };

  // N-Triples / N-Quads: lines already in canonical form skip N3 (nt-fast.ts); N3 gets every other
  // line, preceded by as many newlines as lines were skipped, so its line numbers stay right, and
  // keeps the lines after one until it is back between statements.
  const fast = options.format.name === 'ntriples' || options.format.name === 'nquads' ? makeFastLineReader(options.blankNodePrefix, keepGraph) : null;
  const n3Parser = parser as unknown as { _readCallback?: unknown };
  const betweenStatements = (): boolean => {
    const read = n3Parser._readCallback;
    return (read === N3_TOP_CONTEXT || read === N3_BEFORE_TOP_CONTEXT) && (lexer._input === '' || lexer._input === undefined);
  };
  let fastOn = fast !== null;
  /** Lines the fast path has passed (to N3 or not): where `carry` starts. */
  let consumedLines = 0;
  let carry = '';
  let skippedLines = 0;
  let toN3 = '';
  let n3Busy = false;
  const flushToN3 = (): boolean => {
    if (toN3 === '') return true;
    const text = byteStrings ? toText(toN3) : toN3;
    toN3 = '';
    if (!feed(text)) return false;
    n3Busy = !betweenStatements();
    return true;
  };
  const pushQuad = (quad: NtQuad): void => {
    batch.push(quad);
    if (batch.length >= batchSize) {
      ready.push(batch);
      batch = [];
    }
  };
  /** Lines of `text` (complete ones; `final`: the rest too); false when N3 failed. */
  const lines = (text: string, final: boolean): boolean => {
    const all = carry + text;
    const cut = final ? all.length : all.lastIndexOf('\n') + 1;
    carry = all.slice(cut);
    let pos = 0;
    while (pos < cut) {
      let nl = all.indexOf('\n', pos);
      if (nl < 0 || nl >= cut) nl = cut;
      if (nl < all.length) consumedLines++;
      const quad = n3Busy ? null : fast!(all, pos, nl);
      if (quad !== null && toN3 !== '') {
        // N3 first: it may still be inside a statement the odd lines began.
        if (!flushToN3()) return false;
        if (n3Busy) {
          toN3 = all.slice(pos, nl + 1);
          pos = nl + 1;
          continue;
        }
      }
      if (quad !== null) {
        skippedLines++;
        pushQuad(quad);
      } else {
        if (skippedLines > 0) toN3 += '\n'.repeat(skippedLines);
        skippedLines = 0;
        toN3 += all.slice(pos, Math.min(nl + 1, all.length));
      }
      pos = nl + 1;
    }
    // A line longer than this is no canonical line: N3 takes the rest (and its carry).
    if (carry.length > MAX_FAST_LINE) {
      toN3 += '\n'.repeat(skippedLines) + carry;
      // From here on N3 reads everything (as text).
      carry = '';
      skippedLines = 0;
      fastOn = false;
    }
    return flushToN3();
  };
  const take = (text: string, final: boolean): boolean => (fastOn ? lines(text, final) : feed(byteStrings ? toText(text) : text));

  const decoder = new TextDecoder('utf-8', { fatal: true });
  let bytesSeen = false;
  /** Byte strings: the incomplete UTF-8 sequence at the end of the last chunk. */
  let partial: Buffer | null = null;
  for await (const chunk of input) {
    let text: string;
    if (byteStrings) {
      // Checked as UTF-8 (natively), then read one character per byte: no decoding and, for the
      // import, no encoding again.
      let bytes = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
      if (partial) {
        bytes = Buffer.concat([partial, bytes]);
        partial = null;
      }
      const complete = completeUtf8Length(bytes);
      if (complete < bytes.length) partial = Buffer.from(bytes.subarray(complete));
      const whole = complete < bytes.length ? bytes.subarray(0, complete) : bytes;
      if (!isUtf8(whole)) {
        throw fastOn ? invalidUtf8(whole, { line: consumedLines + 1, linePosition: 0, pending: toText(carry) }, options) : invalidUtf8(whole, lexerPosition(lexer), options);
      }
      text = whole.toString('latin1');
    } else if (typeof chunk === 'string') text = chunk;
    else {
      bytesSeen = true;
      try {
        text = decoder.decode(chunk, { stream: true });
      } catch {
        throw fastOn ? invalidUtf8(chunk, { line: consumedLines + 1, linePosition: 0, pending: carry }, options) : invalidUtf8(chunk, lexerPosition(lexer), options);
      }
    }
    if (!take(text, false)) await fail();
    while (ready.length > 0) yield ready.shift()!;
  }
  let rest = '';
  if (bytesSeen || partial) {
    try {
      if (partial) throw new Error('truncated');
      rest = decoder.decode();
    } catch {
      throw new RdfSyntaxError('invalid UTF-8 (truncated character at the end of the input)', { fileName: options.fileName });
    }
  }
  if (fastOn) {
    if (!lines(rest, true)) await fail();
    // Only N3 inside a statement needs the skipped lines counted, for its end-of-input error.
    if (n3Busy && skippedLines > 0 && !feed('\n'.repeat(skippedLines))) await fail();
  } else if (rest && !feed(rest)) await fail();
  takeSnapshot('');
  onEnd();
  if (failure !== null) await fail();
  while (ready.length > 0) yield ready.shift()!;
  if (batch.length > 0) yield batch;
}

/** A byte string (one character per UTF-8 byte) of `text`. */
const toBytes = (text: string): string => Buffer.from(text, 'utf8').toString('latin1');
/** The text a byte string holds. */
const toText = (bytes: string): string => Buffer.from(bytes, 'latin1').toString('utf8');

/** Length of `bytes` without an incomplete UTF-8 sequence at its end (which the next chunk completes). */
function completeUtf8Length(bytes: Uint8Array): number {
  const n = bytes.length;
  for (let back = 1; back <= 3 && back <= n; back++) {
    const b = bytes[n - back]!;
    if (b < 0x80) return n;
    if (b >= 0xc0) {
      const needs = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : 2;
      return needs > back ? n - back : n;
    }
  }
  return n;
}

/** The text of line `line` as far as the snapshot has it, and the 0-based column of its first char. */
function lineFromSnapshot(snap: Snapshot, line: number): { text: string; column0: number } | null {
  if (line < snap.line) return null;
  let pos = 0;
  for (let l = snap.line; l < line; l++) {
    const nl = snap.text.indexOf('\n', pos);
    if (nl < 0) return null;
    pos = nl + 1;
  }
  let end = snap.text.indexOf('\n', pos);
  if (end < 0) end = snap.text.length;
  if (end > pos && snap.text.charCodeAt(end - 1) === 13) end--;
  return { text: snap.text.slice(pos, end), column0: line === snap.line ? snap.column0 : 0 };
}

function stripN3Suffix(message: string): string {
  return message.replace(/ on line \d+\.$/, '').replace(/\.$/, '');
}

async function toSyntaxErrorN3(failure: unknown, snap: Snapshot, lexer: N3LexerInternals, options: ParseRdfOptions): Promise<Error> {
  const fileName = options.fileName;
  if (failure instanceof UnsupportedTermError) {
    const line = lexer.previousToken?.line;
    return new RdfSyntaxError(failure.message, { fileName, line });
  }
  if (!(failure instanceof Error)) return new RdfSyntaxError(String(failure), { fileName });
  const context = (failure as Error & { context?: N3ErrorContext }).context;
  const detail = stripN3Suffix(failure.message);
  const line = context?.line;
  if (line === undefined) return new RdfSyntaxError(detail, { fileName });
  const token = context?.token;
  if (token && typeof token.start === 'number') {
    return new RdfSyntaxError(detail, { fileName, line: token.line ?? line, column: token.start + 1 });
  }
  // A lexer error: no token. It failed at the first non-blank character after the previous token.
  const lineText = lineFromSnapshot(snap, line);
  if (!lineText) return new RdfSyntaxError(detail, { fileName, line });
  const prev = context?.previousToken;
  const from = prev && (prev.endLine ?? prev.line) === line && typeof prev.end === 'number' ? prev.end : 0;
  let i = Math.max(0, from - lineText.column0);
  while (i < lineText.text.length && (lineText.text[i] === ' ' || lineText.text[i] === '\t')) i++;
  const column = lineText.column0 + i + 1;
  // N-Triples / N-Quads lines stand alone: oxigraph says more precisely what is wrong.
  if ((options.format.name === 'ntriples' || options.format.name === 'nquads') && lineText.column0 === 0) {
    const better = await oxigraphLineDiagnosis(lineText.text, options.format.name);
    if (better) return new RdfSyntaxError(better.detail, { fileName, line, column: better.column ?? column });
  }
  return new RdfSyntaxError(detail, { fileName, line, column });
}

/** oxigraph's word on one N-Triples / N-Quads line, parsed alone in a parse worker. */
async function oxigraphLineDiagnosis(text: string, format: 'ntriples' | 'nquads'): Promise<{ detail: string; column?: number } | null> {
  const reply = await runParseWorkerJob('diagnoseLine', { text, format: formatByName(format).mediaTypes[0] });
  // No message: the line parses alone. A failed worker: N3's own message stands.
  if (reply.type !== 'end' || !reply.message) return null;
  const parsed = parseOxigraphMessage(reply.message);
  // Seen alone, a line with an unterminated literal ends the "file": N3's message says more.
  if (/^Unexpected end of file/i.test(parsed.detail)) return null;
  return { detail: parsed.detail, column: parsed.column };
}

/** Where the text not yet consumed starts: the lexer's position (N3 reads everything). */
function lexerPosition(lexer: N3LexerInternals): { line: number; linePosition: number; pending: string } {
  return { line: lexer._line ?? 1, linePosition: lexer._linePosition ?? 0, pending: typeof lexer._input === 'string' ? lexer._input : '' };
}

function invalidUtf8(chunk: Uint8Array, at: { line: number; linePosition: number; pending: string }, options: ParseRdfOptions): RdfSyntaxError {
  // Failure path only: locate the first bad byte of this chunk (a character split over the
  // previous chunk boundary is attributed to the start of this one).
  const bad = firstInvalidUtf8(chunk);
  const before = new TextDecoder('utf-8').decode(chunk.subarray(0, Math.max(0, bad)));
  const text = at.pending + before;
  let line = at.line;
  let last = -1;
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) {
    line++;
    last = i;
  }
  const column = last < 0 ? at.linePosition + text.length + 1 : text.length - last;
  return new RdfSyntaxError('invalid UTF-8 byte sequence', { fileName: options.fileName, line, column });
}

/** Offset of the first byte that starts an invalid UTF-8 sequence (0 if the chunk starts mid-character). */
export function firstInvalidUtf8(b: Uint8Array): number {
  let i = 0;
  while (i < b.length) {
    const c = b[i]!;
    let n: number;
    let min: number;
    if (c < 0x80) { i++; continue; }
    else if (c >= 0xc2 && c <= 0xdf) { n = 1; min = 0x80; }
    else if (c >= 0xe0 && c <= 0xef) { n = 2; min = 0x800; }
    else if (c >= 0xf0 && c <= 0xf4) { n = 3; min = 0x10000; }
    else return i;
    if (i + n >= b.length) return i; // truncated at the end of the chunk
    let cp = c & (0x3f >> n);
    for (let k = 1; k <= n; k++) {
      const cc = b[i + k]!;
      if ((cc & 0xc0) !== 0x80) return i;
      cp = (cp << 6) | (cc & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return i;
    i += n + 1;
  }
  return b.length;
}
