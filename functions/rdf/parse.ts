/**
 * Streaming RDF parsing into canonical N-Triples terms ({@link NtQuad}) in batches.
 *
 * - Turtle, TriG, N-Triples, N-Quads: N3's push parser, fed chunk by chunk (memory stays flat:
 *   at most one ~64 KiB slice of text plus the quads it produced are held at a time).
 * - JSON-LD, RDF/XML: oxigraph's streaming parser (`lenient: false`), no remote contexts, in a
 *   worker thread (a hostile file can make the WASM module trap: that ends the parse, not the
 *   process), after linear checks that refuse what would make it explode (entity expansion,
 *   nesting depth).
 *
 * Every blank node label becomes `_:<blankNodePrefix><label sanitized to [A-Za-z0-9]>`
 * (see nt.ts), so labels of different files never collide while the same label in one file
 * stays the same node.
 */
import type { Readable } from 'node:stream';
import { MessageChannel, type MessagePort, Worker } from 'node:worker_threads';
import N3 from 'n3';
import type { RdfFormat } from './formats.js';
import {
  assertBlankNodePrefix,
  makeN3TermConverter,
  rdfJsQuadToNt,
  UnsupportedTermError,
  type NtQuad,
  type RdfJsQuadLike,
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
  /** Checks made before the JSON-LD and RDF/XML parsers read the input (DEFAULT_PARSE_LIMITS). */
  limits?: Partial<ParseLimits>;
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
  const fail = async (): Promise<never> => {
    throw await toSyntaxErrorN3(failure, snapshot, lexer, options);
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
      if (failure !== null) await fail();
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
  if (failure !== null) await fail();
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
  const reply = await runParseWorkerJob('diagnoseLine', { text, format: format === 'ntriples' ? 'application/n-triples' : 'application/n-quads' });
  // No message: the line parses alone. A failed worker: N3's own message stands.
  if (reply.type !== 'end' || !reply.message) return null;
  const parsed = parseOxigraphMessage(reply.message);
  // Seen alone, a line with an unterminated literal ends the "file": N3's message says more.
  if (/^Unexpected end of file/i.test(parsed.detail)) return null;
  return { detail: parsed.detail, column: parsed.column };
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
  const limits = { ...DEFAULT_PARSE_LIMITS, ...options.limits };
  // The first RETAIN_BYTES of input, and how many bytes oxigraph has pulled so far.
  let retained: Uint8Array[] | null = [];
  let retainedBytes = 0;
  let pulled = 0;
  // oxigraph's RDF/XML parser accepts a document that ends inside open elements: check that.
  const xml = options.format.name === 'rdfxml' ? new XmlEndCheck() : null;
  // Checked before the parser sees a byte: what would make it explode (see the guards).
  const guard = options.format.name === 'rdfxml' ? new XmlEntityGuard(limits) : new JsonDepthGuard(limits.maxJsonLdDepth);
  const refuse = (problem: { detail: string; line?: number; column?: number } | null): void => {
    if (problem) throw new RdfSyntaxError(problem.detail, { fileName: options.fileName, kind: `refused ${OXIGRAPH_LABEL[options.format.name as keyof typeof OXIGRAPH_LABEL]}`, line: problem.line, column: problem.column });
  };
  async function* source(): AsyncGenerator<Uint8Array> {
    for await (const chunk of input) {
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
      refuse(guard.push(bytes));
      xml?.push(bytes);
      if (xml && xml.depth > limits.maxXmlDepth) refuse({ detail: `elements are nested more than ${limits.maxXmlDepth} levels deep; this platform reads at most ${limits.maxXmlDepth} levels`, line: xml.position.line });
      if (retained) {
        if (retainedBytes + bytes.length <= RETAIN_BYTES) {
          retained.push(bytes);
          retainedBytes += bytes.length;
        } else retained = null;
      }
      pulled += bytes.length;
      yield bytes;
    }
    refuse(guard.end());
  }
  const feed = source();
  const job = new ParseWorkerJob('parse', { format, baseIri: options.baseIRI, batchSize });
  let reusable = false;
  try {
    for (;;) {
      const message = await job.next();
      if (message.type === 'need') {
        // Input errors (a broken download, a refused file) end the parse as they are.
        const next = await feed.next();
        job.reply(next.done ? { done: true } : { chunk: next.value });
      } else if (message.type === 'quads') {
        let batch: NtQuad[];
        try {
          batch = message.quads!.map((q) => rdfJsQuadToNt(q, prefix));
        } catch (e) {
          throw toSyntaxErrorOxigraph(e, options);
        }
        yield batch;
        job.reply({ ack: true });
      } else if (message.type === 'end') {
        reusable = true;
        break;
      } else {
        reusable = !message.trapped;
        if (message.trapped) throw parserFailure(message, options);
        const error = toSyntaxErrorOxigraph(new Error(message.message), options);
        if (error instanceof RdfSyntaxError && error.line === undefined && retained && pulled <= retainedBytes) {
          job.release(reusable);
          const where = await locateOxigraphError(Buffer.concat(retained), { format, baseIri: options.baseIRI }, message.message ?? '', xml !== null);
          if (where) throw new RdfSyntaxError(error.detail, { fileName: options.fileName, kind: error.kind, ...where });
        }
        throw error;
      }
    }
  } finally {
    job.release(reusable);
    // A consumer that stops early must still release the input.
    await feed.return(undefined).catch(() => undefined);
  }
  const unfinished = xml?.end();
  if (unfinished) throw new RdfSyntaxError(unfinished.detail, { fileName: options.fileName, line: unfinished.line, column: unfinished.column });
}

const OXIGRAPH_LABEL = { jsonld: 'JSON-LD', rdfxml: 'RDF/XML', ntriples: 'N-Triples', nquads: 'N-Quads' } as const;

/** A parse worker that trapped, ran out of memory or died: the file, not the platform, failed. */
function parserFailure(message: ParseWorkerMessage, options: ParseRdfOptions): RdfSyntaxError {
  const label = OXIGRAPH_LABEL[options.format.name as keyof typeof OXIGRAPH_LABEL] ?? options.format.name;
  const cause = message.outOfMemory ? 'it ran out of memory' : message.panic ? `it hit an internal limit (${message.panic})` : `it stopped (${message.message})`;
  return new RdfSyntaxError(`${cause}; nothing of this file was imported. Split the file or simplify its structure.`, {
    fileName: options.fileName,
    kind: `the ${label} parser failed on this file`,
  });
}

// ---------------------------------------------------------------------------------------------
/**
 * Resolved beside this module: in a Lambda bundle that is the asset's `index.mjs`, and
 * lib/constructs/app-function.ts copies the worker there.
 */
const PARSE_WORKER_URL = new URL('./rdf-parse-worker.mjs', import.meta.url);

// The parse worker: oxigraph runs on untrusted input in a worker thread (see rdf-parse-worker.mjs)

/** The worker's JavaScript heap (quads in flight are few; WASM memory is not counted here). */
const PARSE_WORKER_LIMITS = { maxOldGenerationSizeMb: 256, maxYoungGenerationSizeMb: 32 };
/** Idle workers kept for the next parse (starting one costs the WASM module's load). */
const MAX_IDLE_PARSE_WORKERS = 2;
const idleParseWorkers: Worker[] = [];

interface ParseWorkerMessage {
  type: 'need' | 'quads' | 'end' | 'error';
  quads?: RdfJsQuadLike[];
  message?: string;
  trapped?: boolean;
  panic?: string;
  outOfMemory?: boolean;
  offset?: number | null;
}

/**
 * One job on a parse worker. The worker posts a message and blocks until `reply`; `next` gives
 * its messages in order. A worker that fails (trap, out of memory, exit) reports one `error`
 * message with `trapped` and is never reused.
 */
class ParseWorkerJob {
  private readonly worker: Worker;
  private readonly port: MessagePort;
  private readonly signal = new Int32Array(new SharedArrayBuffer(4));
  private readonly queue: ParseWorkerMessage[] = [];
  private waiter: ((m: ParseWorkerMessage) => void) | null = null;
  private failed = false;
  private released = false;
  private readonly onError = (e: Error & { code?: string }) => {
    this.failed = true;
    this.deliver({ type: 'error', trapped: true, message: e.message, outOfMemory: e.code === 'ERR_WORKER_OUT_OF_MEMORY' });
  };
  private readonly onExit = (code: number) => {
    this.failed = true;
    this.deliver({ type: 'error', trapped: true, message: `the parser thread exited with code ${code}` });
  };

  constructor(type: 'parse' | 'diagnoseLine' | 'locate', payload: Record<string, unknown>) {
    let worker = idleParseWorkers.pop();
    while (worker && worker.threadId < 0) worker = idleParseWorkers.pop();
    this.worker = worker ?? new Worker(PARSE_WORKER_URL, { resourceLimits: PARSE_WORKER_LIMITS });
    this.worker.ref();
    this.worker.on('error', this.onError);
    this.worker.on('exit', this.onExit);
    const { port1, port2 } = new MessageChannel();
    this.port = port1;
    port1.on('message', (m: ParseWorkerMessage) => {
      if (m.type === 'error' && m.trapped) this.failed = true;
      this.deliver(m);
    });
    this.worker.postMessage({ ...payload, type, port: port2, signal: this.signal }, [port2]);
  }

  private deliver(message: ParseWorkerMessage): void {
    const waiter = this.waiter;
    this.waiter = null;
    if (waiter) waiter(message);
    else this.queue.push(message);
  }

  next(): Promise<ParseWorkerMessage> {
    const queued = this.queue.shift();
    if (queued) return Promise.resolve(queued);
    return new Promise((resolve) => (this.waiter = resolve));
  }

  reply(message: { chunk?: Uint8Array; done?: boolean; ack?: boolean }): void {
    this.port.postMessage(message);
    Atomics.add(this.signal, 0, 1);
    Atomics.notify(this.signal, 0);
  }

  /** Back to the idle pool when the job ended cleanly, else terminated (its memory may be corrupt). */
  release(reusable: boolean): void {
    if (this.released) return;
    this.released = true;
    this.port.close();
    this.worker.off('error', this.onError);
    this.worker.off('exit', this.onExit);
    if (reusable && !this.failed && idleParseWorkers.length < MAX_IDLE_PARSE_WORKERS) {
      this.worker.unref();
      // An idle worker that errors (or exits) leaves the pool; without a listener the error
      // would be thrown in the main thread.
      const worker = this.worker;
      const drop = () => {
        const i = idleParseWorkers.indexOf(worker);
        if (i >= 0) idleParseWorkers.splice(i, 1);
      };
      worker.once('error', drop).once('exit', drop);
      idleParseWorkers.push(worker);
    } else {
      // Swallow a late 'error' of a worker being thrown away.
      this.worker.on('error', () => undefined);
      void this.worker.terminate();
    }
  }
}

/** Runs a one-message job (diagnosis) on a parse worker. */
async function runParseWorkerJob(type: 'diagnoseLine' | 'locate', payload: Record<string, unknown>): Promise<ParseWorkerMessage> {
  const job = new ParseWorkerJob(type, payload);
  let reusable = false;
  try {
    const message = await job.next();
    reusable = message.type === 'end';
    return message;
  } finally {
    job.release(reusable);
  }
}

// ---------------------------------------------------------------------------------------------
// Guards before the parser

/** Limits of the checks made before a JSON-LD or RDF/XML parser reads a file. */
export interface ParseLimits {
  /** Objects and arrays nested in a JSON-LD document (oxigraph's stack overflows near 1,000). */
  maxJsonLdDepth: number;
  /** Elements nested in an RDF/XML document (oxigraph slows down quadratically with depth). */
  maxXmlDepth: number;
  /** Characters of all entity values an RDF/XML DOCTYPE declares together. */
  maxEntityDeclarationChars: number;
  /** Characters entity references may expand to within one text node or tag. */
  maxEntityExpansionChars: number;
  /** Characters of the prolog (XML declaration, comments, DOCTYPE) read before the root element. */
  maxPrologChars: number;
  /** Whether an entity's value may refer to other entities (how "billion laughs" multiplies). */
  entitiesMayReferToEntities: boolean;
}

export const DEFAULT_PARSE_LIMITS: ParseLimits = {
  maxJsonLdDepth: 256,
  maxXmlDepth: 1000,
  maxEntityDeclarationChars: 64 * 1024,
  maxEntityExpansionChars: 16 * 1024 * 1024,
  maxPrologChars: 1024 * 1024,
  entitiesMayReferToEntities: false,
};

interface GuardProblem {
  detail: string;
  line?: number;
}

/**
 * Follows the nesting of `{` and `[` outside strings in a JSON byte stream (linear, any chunking)
 * and reports when it passes the limit.
 */
export class JsonDepthGuard {
  private depth = 0;
  private inString = false;
  private escaped = false;
  private line = 1;

  constructor(private readonly maxDepth: number) {}

  push(bytes: Uint8Array): GuardProblem | null {
    for (let i = 0; i < bytes.length; i++) {
      const b = bytes[i]!;
      if (b === 0x0a) this.line++;
      if (this.inString) {
        if (this.escaped) this.escaped = false;
        else if (b === 0x5c) this.escaped = true;
        else if (b === 0x22) this.inString = false;
      } else if (b === 0x22) this.inString = true;
      else if (b === 0x7b || b === 0x5b) {
        if (++this.depth > this.maxDepth) {
          return {
            detail: `objects and arrays are nested more than ${this.maxDepth} levels deep; this platform reads at most ${this.maxDepth} levels: flatten the document (give nested nodes an "@id" and list them at the top level)`,
            line: this.line,
          };
        }
      } else if (b === 0x7d || b === 0x5d) this.depth--;
    }
    return null;
  }

  end(): GuardProblem | null {
    return null;
  }
}

const PREDEFINED_XML_ENTITIES = new Set(['amp', 'lt', 'gt', 'quot', 'apos']);

/**
 * Reads the DOCTYPE of an RDF/XML byte stream before the parser does and refuses what makes
 * entity expansion explode ("billion laughs"): entities that refer to other entities, parameter
 * and external entities, more than a small total of declared text, and (when entities are
 * declared) references that expand to more than a bound within one text node or tag.
 */
export class XmlEntityGuard {
  private readonly decoder = new TextDecoder('utf-8');
  private prolog: string | null = '';
  private readonly entities = new Map<string, number>();
  private carry = '';
  private expansion = 0;

  constructor(private readonly limits: ParseLimits) {}

  push(bytes: Uint8Array): GuardProblem | null {
    const text = this.decoder.decode(bytes, { stream: true });
    if (this.prolog !== null) {
      this.prolog += text;
      if (this.prolog.length > this.limits.maxPrologChars) {
        return { detail: `the XML declaration, comments and DOCTYPE before the root element are longer than ${this.limits.maxPrologChars} characters` };
      }
      return this.readProlog(false);
    }
    // XML allows a DOCTYPE only before the root element; the parser may still read one later.
    const late = this.lateDoctype(text);
    if (late) return late;
    return this.entities.size === 0 ? null : this.countReferences(text);
  }

  /** The tail of the previous chunk, so a `<!DOCTYPE` split over two chunks is seen. */
  private tail = '';

  private lateDoctype(text: string): GuardProblem | null {
    const window = this.tail + text;
    this.tail = window.slice(-8);
    return /<!doctype/i.test(window) ? { detail: 'a DOCTYPE after the root element started; XML allows one only before it' } : null;
  }

  end(): GuardProblem | null {
    if (this.prolog !== null) return this.readProlog(true);
    return null;
  }

  /** Walks the prolog once it is complete (up to the root element's `<`). */
  private readProlog(final: boolean): GuardProblem | null {
    const text = this.prolog!;
    let pos = 0;
    for (;;) {
      while (pos < text.length && /[\s\uFEFF]/.test(text[pos]!)) pos++;
      if (pos >= text.length) break;
      let end: number;
      if (text.startsWith('<?', pos)) end = after(text.indexOf('?>', pos + 2), 2);
      else if (text.startsWith('<!--', pos)) end = after(text.indexOf('-->', pos + 4), 3);
      else if (text.slice(pos, pos + 9).toUpperCase() === '<!DOCTYPE') {
        end = doctypeEnd(text, pos);
        if (end >= 0) {
          const problem = this.readDoctype(text.slice(pos, end));
          if (problem) return problem;
        }
      } else if (text.length - pos < 9 && '<!DOCTYPE'.startsWith(text.slice(pos).toUpperCase()) && !final) end = -1;
      else {
        // The root element (or something the parser will refuse): the prolog is over.
        this.prolog = null;
        const late = this.lateDoctype(text.slice(pos));
        if (late) return late;
        return this.entities.size > 0 ? this.countReferences(text.slice(pos)) : null;
      }
      if (end < 0) {
        if (text.length > this.limits.maxPrologChars) {
          return { detail: `the XML declaration, comments and DOCTYPE before the root element are longer than ${this.limits.maxPrologChars} characters` };
        }
        if (!final) return null;
        break;
      }
      pos = end;
    }
    if (final) this.prolog = null;
    return null;
  }

  private readDoctype(doctype: string): GuardProblem | null {
    const declarations = doctype.match(/<!ENTITY(?:[^"'>]|"[^"]*"|'[^']*')*>/g) ?? [];
    const advice = 'this platform refuses entity declarations that could expand without bound (a "billion laughs" attack); declare each entity as plain text';
    let total = 0;
    for (const declaration of declarations) {
      const m = /^<!ENTITY\s+(%\s+)?([^\s"'>%]+)\s+(?:"([^"]*)"|'([^']*)'|(SYSTEM|PUBLIC)\b)/.exec(declaration);
      if (!m) return { detail: `cannot read the entity declaration ${JSON.stringify(declaration.slice(0, 80))}; ${advice}` };
      const name = m[2]!;
      if (m[1]) return { detail: `the DOCTYPE declares the parameter entity "%${name}"; ${advice}` };
      if (m[5]) return { detail: `the DOCTYPE declares the external entity "${name}" (${m[5]}); external entities are not read: put its text in the declaration` };
      const value = m[3] ?? m[4] ?? '';
      // Every reference in the value, not only the first (`&amp;&a;&a;` hides `&a;` behind `&amp;`).
      for (const reference of value.matchAll(/&([^#;\s][^;\s]*);|%([^;\s]+);/g)) {
        if (reference[1] && PREDEFINED_XML_ENTITIES.has(reference[1])) continue;
        if (this.limits.entitiesMayReferToEntities) break;
        return { detail: `the entity "${name}" refers to the entity "${reference[1] ?? `%${reference[2]}`}"; ${advice}` };
      }
      total += value.length;
      if (total > this.limits.maxEntityDeclarationChars) {
        return { detail: `the DOCTYPE declares entities of more than ${this.limits.maxEntityDeclarationChars} characters in total; ${advice}` };
      }
      this.entities.set(name, value.length);
    }
    return null;
  }

  /** Adds up what declared entities expand to between one `<` and the next. */
  private countReferences(chunk: string): GuardProblem | null {
    const text = this.carry + chunk;
    this.carry = '';
    let pos = 0;
    for (;;) {
      const amp = text.indexOf('&', pos);
      const lt = text.indexOf('<', pos);
      if (lt >= 0 && (amp < 0 || lt < amp)) {
        this.expansion = 0;
        pos = lt + 1;
        continue;
      }
      if (amp < 0) return null;
      const semicolon = text.indexOf(';', amp);
      if (semicolon < 0) {
        // A reference may continue in the next chunk.
        if (text.length - amp < 256) this.carry = text.slice(amp);
        return null;
      }
      const size = this.entities.get(text.slice(amp + 1, semicolon));
      if (size !== undefined) {
        this.expansion += size;
        if (this.expansion > this.limits.maxEntityExpansionChars) {
          return { detail: `entity references expand to more than ${this.limits.maxEntityExpansionChars} characters in one text or tag; ${'write the text out instead of repeating entities'}` };
        }
      }
      pos = amp + 1;
    }
  }
}

/** Position after the DOCTYPE starting at `start` (quotes and the `[...]` subset skipped), or -1. */
function doctypeEnd(text: string, start: number): number {
  let depth = 0;
  for (let i = start + 2; i < text.length; i++) {
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

  /** Elements open at the end of what was pushed so far. */
  get depth(): number {
    return this.open.length;
  }

  /** Where the text checked so far ends. */
  get position(): { line: number; column: number } {
    return { line: this.line, column: this.column0 + 1 };
  }

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
      return doctypeEnd(text, lt);
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
 * Failure path: oxigraph gave no position (RDF/XML, JSON-LD semantic errors). A parse worker
 * re-parses the retained input in 4 KiB chunks to find the chunk where the same error shows up,
 * then once more feeding that chunk byte by byte: the error is detected where the parser stood.
 * For RDF/XML the column is moved back to the start of the tag being read, if on that line.
 */
async function locateOxigraphError(
  data: Buffer,
  oxOptions: { format: string; baseIri?: string },
  message: string,
  xml: boolean,
): Promise<{ line: number; column: number } | null> {
  const reply = await runParseWorkerJob('locate', { data, ...oxOptions, message });
  if (reply.type !== 'end' || reply.offset === null || reply.offset === undefined) return null;
  const fine = reply.offset;
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
