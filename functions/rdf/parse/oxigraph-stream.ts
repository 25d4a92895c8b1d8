/**
 * JSON-LD and RDF/XML: oxigraph's streaming parser (`lenient: false`, no remote contexts) in a
 * parse worker (a hostile file can make the WASM module trap: that ends the parse, not the
 * process), after linear checks that refuse what would make it explode (see guards.ts).
 */
import { type NtQuad, rdfJsQuadToNt, UnsupportedTermError } from '../nt.js';
import { parseOxigraphMessage, RdfSyntaxError } from './errors.js';
import { DEFAULT_PARSE_LIMITS, JsonDepthGuard, XmlEndCheck, XmlEntityGuard } from './guards.js';
import { DEFAULT_BATCH, type ParseRdfOptions } from './options.js';
import { ParseWorkerJob, type ParseWorkerMessage, runParseWorkerJob } from './worker-pool.js';

/** Input kept (failure path only) to locate errors oxigraph reports without a position. */
const RETAIN_BYTES = 8 * 1024 * 1024;

export async function* parseWithOxigraph(input: AsyncIterable<Buffer | Uint8Array | string>, options: ParseRdfOptions): AsyncGenerator<NtQuad[]> {
  const batchSize = options.batchSize ?? DEFAULT_BATCH;
  const prefix = options.blankNodePrefix;
  // oxigraph names formats by their canonical media type.
  const format = options.format.mediaTypes[0]!;
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
