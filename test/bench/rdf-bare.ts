/**
 * Bare-library RDF speed, as the baseline for the HTTP import/export benchmark:
 * - `bareParse(file, format)`: N3's StreamParser (Turtle/TriG/N-Triples/N-Quads) or oxigraph's
 *   streaming parser (JSON-LD, RDF/XML) over a file (`.gz` is gunzipped), counting statements.
 * - `bareSerialize(quads, format, sink?)`: N3's StreamWriter (Turtle/TriG/N-Triples/N-Quads; N3 has
 *   no JSON-LD writer) fed from canonical quad batches, writing to `sink` (default: a byte counter).
 * - `ourParse` / `ourSerialize`: the same through functions/rdf (parseRdf → NtQuad batches,
 *   serializeRdf), without HTTP, storage or gzip.
 * - `generateNtQuads(n)`, `writeNTriplesFile(path, n)`: synthetic data.
 *
 * Run directly for a table: `npx tsx test/bench/rdf-bare.ts [statements=1000000]`.
 * Prints figures; asserts nothing.
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { stat, unlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { pathToFileURL } from 'node:url';
import { createGunzip } from 'node:zlib';
import N3 from 'n3';
import * as oxigraph from 'oxigraph';
import { formatByName, type RdfFormat } from '../../functions/rdf/formats.js';
import { ntQuadToRdfJs, type NtQuad, type RdfJsFactoryLike } from '../../functions/rdf/nt.js';
import { parseRdf } from '../../functions/rdf/parse.js';
import { serializeRdf } from '../../functions/rdf/serialize.js';

export interface SpeedResult {
  statements: number;
  seconds: number;
  /** Output bytes (serializers only). */
  bytes?: number;
}

const N3_FORMAT: Partial<Record<RdfFormat['name'], string>> = { turtle: 'Turtle', trig: 'TriG', ntriples: 'N-Triples', nquads: 'N-Quads' };
const OX_FORMAT: Partial<Record<RdfFormat['name'], string>> = { jsonld: 'application/ld+json', rdfxml: 'application/rdf+xml' };

function openInput(file: string): Readable {
  const raw = createReadStream(file, { highWaterMark: 64 * 1024 });
  return file.endsWith('.gz') ? raw.pipe(createGunzip()) : raw;
}

/** The bare parser over a file: N3 StreamParser, or oxigraph for JSON-LD / RDF/XML. */
export async function bareParse(file: string, format: RdfFormat): Promise<SpeedResult> {
  const start = performance.now();
  let statements = 0;
  const n3Format = N3_FORMAT[format.name];
  if (n3Format) {
    await new Promise<void>((resolve, reject) => {
      const parser = new N3.StreamParser({ format: n3Format });
      parser.on('data', () => void statements++);
      parser.on('end', resolve);
      parser.on('error', reject);
      const input = openInput(file);
      input.on('error', reject);
      input.pipe(parser);
    });
  } else {
    for await (const _quad of oxigraph.parse(openInput(file), { format: OX_FORMAT[format.name]!, lenient: false })) statements++;
  }
  return { statements, seconds: (performance.now() - start) / 1000 };
}

/** Our parser (parseRdf) over a file. */
export async function ourParse(file: string, format: RdfFormat): Promise<SpeedResult> {
  const start = performance.now();
  let statements = 0;
  for await (const batch of parseRdf(openInput(file), { format, blankNodePrefix: 'bench', baseIRI: 'https://example.org/base/' })) {
    statements += batch.length;
  }
  return { statements, seconds: (performance.now() - start) / 1000 };
}

/** A sink that counts and drops bytes. */
export function countingSink(): Writable & { bytes: number } {
  const sink = new Writable({
    highWaterMark: 64 * 1024,
    write(chunk: Buffer | string, _encoding, callback) {
      sink.bytes += typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.length;
      callback();
    },
  }) as Writable & { bytes: number };
  sink.bytes = 0;
  return sink;
}

type Source<T> = AsyncIterable<T[]> | (() => AsyncIterable<T[]>);
const open = <T>(source: Source<T>): AsyncIterable<T[]> => (typeof source === 'function' ? source() : source);

/**
 * N3's StreamWriter fed from canonical quads: each batch is turned into N3 quads
 * (`ntQuadToRdfJs` with N3's DataFactory; already-RDF/JS quads pass as they are) and written.
 */
export async function bareSerialize(quads: Source<NtQuad | N3.Quad>, format: RdfFormat, sink?: Writable): Promise<SpeedResult> {
  const n3Format = N3_FORMAT[format.name];
  if (!n3Format) throw new Error(`N3 has no ${format.name} writer`);
  const out = sink ?? countingSink();
  const start = performance.now();
  let statements = 0;
  const writer = new N3.StreamWriter({ format: n3Format });
  const done = pipeline(writer, out);
  const factory = N3.DataFactory as unknown as RdfJsFactoryLike<N3.Term, N3.Quad>;
  for await (const batch of open(quads)) {
    for (const q of batch) writer.write('termType' in q ? q : ntQuadToRdfJs(q, factory));
    statements += batch.length;
    // Respect backpressure like a real export would.
    if (writer.readableLength > 1 << 20) await new Promise((resolve) => setImmediate(resolve));
  }
  writer.end();
  await done;
  return { statements, seconds: (performance.now() - start) / 1000, bytes: (out as Writable & { bytes?: number }).bytes };
}

/** serializeRdf over batches of canonical quads (see {@link generateNtQuads}). */
export async function ourSerialize(quads: Source<NtQuad>, format: RdfFormat, sink?: Writable): Promise<SpeedResult> {
  const out = sink ?? countingSink();
  const start = performance.now();
  let statements = 0;
  async function* counted(): AsyncGenerator<NtQuad[]> {
    for await (const batch of open(quads)) {
      statements += batch.length;
      yield batch;
    }
  }
  await pipeline(serializeRdf(counted(), { format, prefixes: [{ prefixLabel: 'ex', iri: 'https://example.org/def/' }] }), out);
  return { statements, seconds: (performance.now() - start) / 1000, bytes: (out as Writable & { bytes?: number }).bytes };
}

// ---------------------------------------------------------------------------------------------
// Synthetic data: 8 statement shapes per subject (type, language literal with quotes, integer,
// IRI link, blank node, blank node's literal, date, literal with newline and non-ASCII),
// `graphs` named graphs in consecutive runs.

function statement(i: number, n: number): [string, string, string] {
  const s = `<https://example.org/id/item${i >> 3}>`;
  switch (i & 7) {
    case 0: return [s, '<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>', '<https://example.org/def/Thing>'];
    case 1: return [s, '<http://www.w3.org/2000/01/rdf-schema#label>', `"Item number ${i} with \\"quotes\\""@en`];
    case 2: return [s, '<https://example.org/def/count>', `"${i}"^^<http://www.w3.org/2001/XMLSchema#integer>`];
    case 3: return [s, '<https://example.org/def/related>', `<https://example.org/id/item${(i * 7) % n}>`];
    case 4: return [s, '<https://example.org/def/node>', `_:b${i >> 3}`];
    case 5: return [`_:b${i >> 3}`, '<https://example.org/def/value>', `"some text value ${i}"`];
    case 6: return [s, '<https://example.org/def/date>', `"2024-01-${String((i % 28) + 1).padStart(2, '0')}"^^<http://www.w3.org/2001/XMLSchema#date>`];
    default: return [s, '<https://example.org/def/description>', `"Multi\\nline é ünïcödé ${i}"`];
  }
}

export async function* generateNtQuads(n: number, options: { graphs?: number; batchSize?: number } = {}): AsyncGenerator<NtQuad[]> {
  const graphs = options.graphs ?? 0;
  const batchSize = options.batchSize ?? 1000;
  const perGraph = graphs > 0 ? Math.ceil(n / graphs) : n;
  let batch: NtQuad[] = [];
  for (let i = 0; i < n; i++) {
    const [subject, predicate, object] = statement(i, n);
    batch.push({ subject, predicate, object, graph: graphs > 0 ? `<https://example.org/graph/${Math.floor(i / perGraph)}>` : null });
    if (batch.length === batchSize) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length > 0) yield batch;
}

/** Writes `n` generated statements as N-Triples. */
export async function writeNTriplesFile(path: string, n: number): Promise<void> {
  const out = createWriteStream(path);
  await pipeline(serializeRdf(generateNtQuads(n), { format: formatByName('ntriples') }), out);
}

// ---------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const n = Number(process.argv[2] ?? 1_000_000);
  const file = join(tmpdir(), `rdf-bare-${process.pid}.nt`);
  await writeNTriplesFile(file, n);
  const size = (await stat(file)).size;
  const rate = (r: SpeedResult): string => `${Math.round(r.statements / r.seconds).toLocaleString('en')} statements/s (${r.seconds.toFixed(2)} s)`;
  console.log(`# ${n.toLocaleString('en')} generated statements, N-Triples ${(size / 2 ** 20).toFixed(0)} MiB`);
  try {
    const nt = formatByName('ntriples');
    // Warm-up (JIT) on a slice of the work.
    await bareParse(file, nt);
    await ourParse(file, nt);
    console.log(`parse N-Triples  bare N3      ${rate(await bareParse(file, nt))}`);
    console.log(`parse N-Triples  parseRdf     ${rate(await ourParse(file, nt))}`);
    for (const name of ['ntriples', 'nquads', 'turtle', 'trig', 'jsonld'] as const) {
      const format = formatByName(name);
      const graphs = format.quads ? 10 : 0;
      if (N3_FORMAT[name]) console.log(`write ${name.padEnd(9)}  bare N3      ${rate(await bareSerialize(() => generateNtQuads(n, { graphs }), format))}`);
      console.log(`write ${name.padEnd(9)}  serializeRdf ${rate(await ourSerialize(() => generateNtQuads(n, { graphs }), format))}`);
    }
  } finally {
    await unlink(file).catch(() => undefined);
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await main();
}
