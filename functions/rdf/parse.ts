/**
 * Streaming RDF parsing into canonical N-Triples terms ({@link NtQuad}) in batches.
 *
 * - Turtle, TriG, N-Triples, N-Quads: N3's push parser, fed chunk by chunk (memory stays flat:
 *   at most one ~64 KiB slice of text plus the quads it produced are held at a time).
 * - JSON-LD, RDF/XML: oxigraph's streaming parser (`lenient: false`), no remote contexts.
 *
 * Every blank node label becomes `_:<blankNodePrefix><label sanitized to [A-Za-z0-9]>`
 * (see nt.ts), so labels of different files never collide while the same label in one file
 * stays the same node.
 */
import type { Readable } from 'node:stream';
import N3 from 'n3';
import * as oxigraph from 'oxigraph';
import type { RdfFormat } from './formats.js';
import {
  assertBlankNodePrefix,
  makeN3TermConverter,
  rdfJsQuadToNt,
  UnsupportedTermError,
  type NtQuad,
  type RdfJsTermLike,
} from './nt.js';

export interface ParseRdfOptions {
  format: RdfFormat;
  /** Resolves relative IRIs (Turtle/TriG `@base` overrides it; N-Triples/N-Quads ignore it). */
  baseIRI?: string;
  /** [A-Za-z0-9]*; use a unique, fixed-length value per imported file (e.g. 10 random base36 chars). */
  blankNodePrefix: string;
  /** Only used in error messages. */
  fileName?: string;
  /** Maximum quads per yielded batch (default 1000). */
  batchSize?: number;
}

/** Malformed input. `message` reads like `pets.ttl: syntax error at line 3, column 14: <detail>`. */
export class RdfSyntaxError extends Error {
  readonly line?: number;
  readonly column?: number;
  readonly fileName?: string;
  /** What went wrong, without file name and position. */
  readonly detail: string;
  /** `syntax error`, or e.g. `unsupported JSON-LD`. */
  readonly kind: string;

  constructor(detail: string, where: { line?: number; column?: number; fileName?: string; kind?: string } = {}) {
    const kind = where.kind ?? 'syntax error';
    let at = '';
    if (where.line !== undefined) at = where.column !== undefined ? ` at line ${where.line}, column ${where.column}` : ` at line ${where.line}`;
    super(`${where.fileName ? `${where.fileName}: ` : ''}${kind}${at}: ${detail}`);
    this.name = 'RdfSyntaxError';
    this.detail = detail;
    this.kind = kind;
    if (where.line !== undefined) this.line = where.line;
    if (where.column !== undefined) this.column = where.column;
    if (where.fileName !== undefined) this.fileName = where.fileName;
  }
}

const DEFAULT_BATCH = 1000;
/** Text is handed to N3 in slices of at most this many characters. */
const SLICE = 64 * 1024;

/** Parse `input` (already decompressed bytes or text) into batches of canonical quads. */
export function parseRdf(input: Readable | AsyncIterable<Buffer | Uint8Array | string>, options: ParseRdfOptions): AsyncIterable<NtQuad[]> {
  assertBlankNodePrefix(options.blankNodePrefix);
  switch (options.format.name) {
    case 'turtle':
    case 'trig':
    case 'ntriples':
    case 'nquads':
      return parseWithN3(input as AsyncIterable<Buffer | Uint8Array | string>, options);
    case 'jsonld':
    case 'rdfxml':
      return parseWithOxigraph(input as AsyncIterable<Buffer | Uint8Array | string>, options);
    default:
      throw new Error(`no parser for format ${(options.format as RdfFormat).name}`);
  }
}

// ---------------------------------------------------------------------------------------------
// N3

const N3_FORMAT = { turtle: 'Turtle', trig: 'TriG', ntriples: 'N-Triples', nquads: 'N-Quads' } as const;
/** N3 prefixes blank node labels written in the file with this; `=` never starts a label N3 invents. */
const N3_NAMED = '=';

interface N3Token { line?: number; endLine?: number; start?: number; end?: number }
interface N3ErrorContext { line?: number; token?: N3Token; previousToken?: N3Token }
interface N3LexerInternals { _line?: number; _linePosition?: number; _input?: string | null; previousToken?: N3Token }
interface N3Quad { subject: RdfJsTermLike; predicate: RdfJsTermLike; object: RdfJsTermLike; graph: RdfJsTermLike }

/** Text the lexer had not yet consumed when a slice was fed, and where it starts. */
interface Snapshot { line: number; column0: number; text: string }

async function* parseWithN3(input: AsyncIterable<Buffer | Uint8Array | string>, options: ParseRdfOptions): AsyncGenerator<NtQuad[]> {
  const name = options.format.name as keyof typeof N3_FORMAT;
  const batchSize = options.batchSize ?? DEFAULT_BATCH;
  const parser = new N3.Parser({ format: N3_FORMAT[name], baseIRI: options.baseIRI, blankNodePrefix: N3_NAMED });
  const lexer = (parser as unknown as { _lexer: N3LexerInternals })._lexer;
  const term = makeN3TermConverter(options.blankNodePrefix, N3_NAMED);
  const keepGraph = options.format.quads;

  let batch: NtQuad[] = [];
  const ready: NtQuad[][] = [];
  let failure: unknown = null;
  let onData: (chunk: string) => void = () => undefined;
  let onEnd: () => void = () => undefined;
  let snapshot: Snapshot = { line: 1, column0: 0, text: '' };

  let lastSubjectTerm: RdfJsTermLike | null = null;
  let lastSubject = '';
  const onQuad = (error: Error | null, quad: N3Quad | null): void => {
    if (failure !== null) return;
    if (error) {
      failure = error;
      return;
    }
    if (!quad) return;
    try {
      const g = quad.graph;
      // Turtle repeats the very same subject term object over `;` lists: convert it once.
      if (quad.subject !== lastSubjectTerm) {
        lastSubject = term(quad.subject);
        lastSubjectTerm = quad.subject;
      }
      batch.push({
        subject: lastSubject,
        predicate: term(quad.predicate),
        object: term(quad.object),
        graph: keepGraph && g.termType !== 'DefaultGraph' ? term(g) : null,
      });
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
  const fail = (): never => {
    throw toSyntaxErrorN3(failure, snapshot, lexer, options);
  };

  const decoder = new TextDecoder('utf-8', { fatal: true });
  let bytesSeen = false;
  for await (const chunk of input) {
    let text: string;
    if (typeof chunk === 'string') text = chunk;
    else {
      bytesSeen = true;
      try {
        text = decoder.decode(chunk, { stream: true });
      } catch {
        throw invalidUtf8(chunk, lexer, options);
      }
    }
    for (let i = 0; i < text.length; i += SLICE) {
      const slice = text.length <= SLICE ? text : text.slice(i, i + SLICE);
      takeSnapshot(slice);
      onData(slice);
      if (failure !== null) fail();
      while (ready.length > 0) yield ready.shift()!;
    }
  }
  if (bytesSeen) {
    let rest: string;
    try {
      rest = decoder.decode();
    } catch {
      throw new RdfSyntaxError('invalid UTF-8 (truncated character at the end of the input)', { fileName: options.fileName });
    }
    if (rest) {
      takeSnapshot(rest);
      onData(rest);
    }
  }
  takeSnapshot('');
  onEnd();
  if (failure !== null) fail();
  while (ready.length > 0) yield ready.shift()!;
  if (batch.length > 0) yield batch;
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

function toSyntaxErrorN3(failure: unknown, snap: Snapshot, lexer: N3LexerInternals, options: ParseRdfOptions): Error {
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
    const better = oxigraphLineDiagnosis(lineText.text, options.format.name);
    if (better) return new RdfSyntaxError(better.detail, { fileName, line, column: better.column ?? column });
  }
  return new RdfSyntaxError(detail, { fileName, line, column });
}

function oxigraphLineDiagnosis(text: string, format: 'ntriples' | 'nquads'): { detail: string; column?: number } | null {
  try {
    oxigraph.parse(`${text}\n`, { format: format === 'ntriples' ? 'application/n-triples' : 'application/n-quads', lenient: false });
    return null;
  } catch (e) {
    const parsed = parseOxigraphMessage(e instanceof Error ? e.message : String(e));
    // Seen alone, a line with an unterminated literal ends the "file": N3's message says more.
    if (/^Unexpected end of file/i.test(parsed.detail)) return null;
    return { detail: parsed.detail, column: parsed.column };
  }
}

function invalidUtf8(chunk: Uint8Array, lexer: N3LexerInternals, options: ParseRdfOptions): RdfSyntaxError {
  // Failure path only: locate the first bad byte of this chunk (a character split over the
  // previous chunk boundary is attributed to the start of this one).
  const bad = firstInvalidUtf8(chunk);
  const before = new TextDecoder('utf-8').decode(chunk.subarray(0, Math.max(0, bad)));
  const pending = typeof lexer._input === 'string' ? lexer._input : '';
  const text = pending + before;
  let line = lexer._line ?? 1;
  let last = -1;
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) {
    line++;
    last = i;
  }
  const column = last < 0 ? (lexer._linePosition ?? 0) + text.length + 1 : text.length - last;
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

// ---------------------------------------------------------------------------------------------
// oxigraph (JSON-LD, RDF/XML)

const OXIGRAPH_FORMAT = { jsonld: 'application/ld+json', rdfxml: 'application/rdf+xml' } as const;
/** Input kept (failure path only) to locate errors oxigraph reports without a position. */
const RETAIN_BYTES = 8 * 1024 * 1024;

async function* parseWithOxigraph(input: AsyncIterable<Buffer | Uint8Array | string>, options: ParseRdfOptions): AsyncGenerator<NtQuad[]> {
  const batchSize = options.batchSize ?? DEFAULT_BATCH;
  const prefix = options.blankNodePrefix;
  const format = OXIGRAPH_FORMAT[options.format.name as keyof typeof OXIGRAPH_FORMAT];
  const oxOptions = { format, ...(options.baseIRI ? { base_iri: options.baseIRI } : {}), lenient: false };
  let inputError: { error: unknown } | null = null;
  // The first RETAIN_BYTES of input, and how many bytes oxigraph has pulled so far.
  let retained: Uint8Array[] | null = [];
  let retainedBytes = 0;
  let pulled = 0;
  // oxigraph's RDF/XML parser accepts a document that ends inside open elements: check that.
  const xml = options.format.name === 'rdfxml' ? new XmlEndCheck() : null;
  async function* source(): AsyncGenerator<Uint8Array> {
    try {
      for await (const chunk of input) {
        const bytes = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
        xml?.push(bytes);
        if (retained) {
          if (retainedBytes + bytes.length <= RETAIN_BYTES) {
            retained.push(bytes);
            retainedBytes += bytes.length;
          } else retained = null;
        }
        pulled += bytes.length;
        yield bytes;
      }
    } catch (error) {
      inputError = { error };
      throw error;
    }
  }
  const feed = source();
  const quads = oxigraph.parse(feed, oxOptions);
  let batch: NtQuad[] = [];
  try {
    for await (const q of quads) {
      batch.push(rdfJsQuadToNt(q as unknown as N3Quad, prefix));
      if (batch.length >= batchSize) {
        const full = batch;
        batch = [];
        yield full;
      }
    }
  } catch (e) {
    if (inputError) throw (inputError as { error: unknown }).error;
    const error = toSyntaxErrorOxigraph(e, options);
    if (error instanceof RdfSyntaxError && error.line === undefined && retained && pulled <= retainedBytes && !(e instanceof UnsupportedTermError)) {
      const where = locateOxigraphError(Buffer.concat(retained), oxOptions, e instanceof Error ? e.message : String(e), options.format.name === 'rdfxml');
      if (where) throw new RdfSyntaxError(error.detail, { fileName: options.fileName, kind: error.kind, ...where });
    }
    throw error;
  } finally {
    // A consumer that stops early must still release the input (oxigraph does not close it).
    await feed.return(undefined).catch(() => undefined);
  }
  const unfinished = xml?.end();
  if (unfinished) throw new RdfSyntaxError(unfinished.detail, { fileName: options.fileName, line: unfinished.line, column: unfinished.column });
  if (batch.length > 0) yield batch;
}

/**
 * Follows the element nesting of an XML byte stream that oxigraph has already checked for
 * everything else (tags, attributes, comments, CDATA, PIs, DOCTYPE) and says, at the end,
 * whether the document was complete: a root element, and every element closed.
 */
export class XmlEndCheck {
  private readonly decoder = new TextDecoder('utf-8');
  private carry = '';
  private readonly open: string[] = [];
  private root = false;
  private line = 1;
  private column0 = 0;

  push(bytes: Uint8Array): void {
    this.scan(this.carry + this.decoder.decode(bytes, { stream: true }), false);
  }

  end(): { detail: string; line: number; column: number } | null {
    this.scan(this.carry + this.decoder.decode(), true);
    const at = { line: this.line, column: this.column0 + 1 };
    if (this.open.length > 0) {
      return { detail: `unexpected end of input: element <${this.open[this.open.length - 1]}> is not closed`, ...at };
    }
    if (!this.root) return { detail: 'no root element: an RDF/XML document needs one (e.g. <rdf:RDF>)', ...at };
    return null;
  }

  private scan(text: string, final: boolean): void {
    let pos = 0;
    let done = text.length;
    for (;;) {
      const lt = text.indexOf('<', pos);
      if (lt < 0) break;
      const end = this.constructEnd(text, lt);
      if (end < 0) {
        // Incomplete construct at the end of this chunk: keep it for the next one.
        if (!final) done = lt;
        break;
      }
      pos = end;
    }
    this.carry = text.slice(done);
    this.advance(text, done);
  }

  /** Position after the construct starting with `<` at `lt`, or -1 if it continues beyond `text`. */
  private constructEnd(text: string, lt: number): number {
    const next = text.charCodeAt(lt + 1);
    if (Number.isNaN(next)) return -1;
    if (next === 33 /* ! */) {
      if (text.length < lt + 9 && !text.startsWith('<!--', lt) && !text.startsWith('<![CDATA[', lt)) {
        // not enough text to tell a comment or CDATA from a DOCTYPE
        if ('<!--'.startsWith(text.slice(lt, lt + 4)) || '<![CDATA['.startsWith(text.slice(lt, lt + 9))) return -1;
      }
      if (text.startsWith('<!--', lt)) return after(text.indexOf('-->', lt + 4), 3);
      if (text.startsWith('<![CDATA[', lt)) return after(text.indexOf(']]>', lt + 9), 3);
      // DOCTYPE (possibly with an internal subset in [...])
      let depth = 0;
      for (let i = lt + 2; i < text.length; i++) {
        const c = text.charCodeAt(i);
        if (c === 34 || c === 39) {
          const close = text.indexOf(text[i]!, i + 1);
          if (close < 0) return -1;
          i = close;
        } else if (c === 91) depth++;
        else if (c === 93) depth--;
        else if (c === 62 && depth <= 0) return i + 1;
      }
      return -1;
    }
    if (next === 63 /* ? */) return after(text.indexOf('?>', lt + 2), 2);
    if (next === 47 /* / */) {
      const gt = text.indexOf('>', lt + 2);
      if (gt < 0) return -1;
      this.open.pop();
      return gt + 1;
    }
    // start tag: find the '>' outside attribute values
    for (let i = lt + 1; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c === 34 || c === 39) {
        const close = text.indexOf(text[i]!, i + 1);
        if (close < 0) return -1;
        i = close;
      } else if (c === 62) {
        if (text.charCodeAt(i - 1) !== 47 /* / */) this.open.push(/^<([^\s/>]+)/.exec(text.slice(lt, i + 1))?.[1] ?? '?');
        this.root = true;
        return i + 1;
      }
    }
    return -1;
  }

  private advance(text: string, upTo: number): void {
    let last = -1;
    for (let i = text.indexOf('\n'); i >= 0 && i < upTo; i = text.indexOf('\n', i + 1)) {
      this.line++;
      last = i;
    }
    this.column0 = last < 0 ? this.column0 + upTo : upTo - last - 1;
  }
}

function after(index: number, length: number): number {
  return index < 0 ? -1 : index + length;
}

/**
 * Failure path: oxigraph gave no position (RDF/XML, JSON-LD semantic errors). Re-parse the
 * retained input synchronously in 4 KiB chunks to find the chunk where the same error shows up,
 * then once more feeding that chunk byte by byte: the error is detected where the parser stood.
 * For RDF/XML the column is moved back to the start of the tag being read, if on that line.
 */
function locateOxigraphError(
  data: Buffer,
  oxOptions: { format: string; base_iri?: string; lenient: boolean },
  message: string,
  xml: boolean,
): { line: number; column: number } | null {
  const STEP = 4096;
  const run = (fineFrom: number): number | null => {
    let pos = 0;
    function* chunks(): Generator<Uint8Array> {
      while (pos < data.length) {
        const size = pos < fineFrom ? Math.min(STEP, fineFrom - pos) : pos < fineFrom + STEP ? 1 : STEP;
        const chunk = data.subarray(pos, pos + size);
        pos += size;
        yield chunk;
      }
    }
    try {
      for (const _q of oxigraph.parse(chunks(), oxOptions)) void _q;
      return null;
    } catch (e) {
      return (e instanceof Error ? e.message : String(e)) === message ? pos : null;
    }
  };
  const coarse = run(Number.MAX_SAFE_INTEGER);
  if (coarse === null) return null;
  const fine = run(Math.max(0, coarse - STEP)) ?? coarse;
  const before = data.subarray(0, fine).toString('utf8');
  const lineStart = before.lastIndexOf('\n') + 1;
  let line = 1;
  for (let i = before.indexOf('\n'); i >= 0; i = before.indexOf('\n', i + 1)) line++;
  let column0 = before.length - lineStart;
  if (xml) {
    const tag = before.lastIndexOf('<');
    if (tag >= lineStart) column0 = tag - lineStart;
  } else if (column0 > 0) column0--; // the character that was just read
  return { line, column: column0 + 1 };
}

/**
 * oxigraph messages: `Parser error at line 1 column 48: ...`,
 * `Parser error at line 4 between columns 16 and 20: ...`,
 * `Parser error between line 2 column 23 and line 3 column 1: ...`, or no position at all.
 */
export function parseOxigraphMessage(message: string): { detail: string; line?: number; column?: number } {
  const m =
    /^Parser error (?:at line (\d+) (?:column (\d+)|between columns (\d+) and (?:column )?\d+)|between line (\d+) column (\d+) and line \d+ column \d+): ([\s\S]*)$/.exec(message);
  if (!m) return { detail: message };
  const line = Number(m[1] ?? m[4]);
  const column = Number(m[2] ?? m[3] ?? m[5]);
  return { detail: m[6]!, line, column };
}

function toSyntaxErrorOxigraph(e: unknown, options: ParseRdfOptions): Error {
  const fileName = options.fileName;
  if (e instanceof UnsupportedTermError) return new RdfSyntaxError(e.message, { fileName });
  const message = e instanceof Error ? e.message : String(e);
  if (/LoadDocumentCallback|remote context/i.test(message)) {
    return new RdfSyntaxError(
      'remote JSON-LD contexts are not supported: this platform does not fetch @context URLs; embed the context object in the document instead',
      { fileName, kind: 'unsupported JSON-LD' },
    );
  }
  const { detail, line, column } = parseOxigraphMessage(message);
  return new RdfSyntaxError(detail, { fileName, line, column });
}
