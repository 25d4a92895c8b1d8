/**
 * SPARQL Update's LOAD on a dataset: the document is fetched through the platform's own guarded
 * outbound fetch (the same destinations URL imports may reach) and read by the platform's RDF
 * parsers, never by the engine (which has no network, and must not have one).
 */
import { formatByName, type RdfFormat } from '../../rdf/formats.js';
import { formatFromMediaType, formatFromPath } from '../../rdf/negotiate.js';
import { parseRdf } from '../../rdf/parse.js';
import { planLoads } from '../../rdf/sparql-analysis.js';
import { DEFAULT_GUNZIP_LIMITS, gunzipChecked } from '../data/gunzip.js';
import { UnprocessableError } from '../shared/errors.js';
import type { Platform } from '../shared/platform.js';

/** All documents one update may LOAD together: the update runs inside one request. */
export const MAX_LOAD_BYTES = 16 * 1024 * 1024;
/** Per document: the update must finish well inside the API's 30 s. */
export const LOAD_TIMEOUT_MS = 15_000;

/**
 * The update with every LOAD carried out: each becomes an INSERT DATA of the document's triples
 * into its graph (or the default graph). A LOAD that fails is a 422 naming the source, unless it
 * is SILENT, when it inserts nothing, as SPARQL says.
 */
export async function withLoadsCarriedOut(platform: Platform, update: string, baseIri: string | undefined): Promise<string> {
  if (!/load/i.test(update)) return update;
  const token = platform.ids.newId().replace(/[^A-Za-z0-9]/g, '');
  const plan = await planLoads(update, baseIri, token);
  if (!plan.loads.length) return update;
  let text = plan.text;
  let budget = MAX_LOAD_BYTES;
  for (const [i, load] of plan.loads.entries()) {
    let triples = '';
    try {
      const read = await loadDocument(platform, load.source, budget, `${token}l${i}`);
      budget -= read.bytes;
      triples = read.lines;
    } catch (e) {
      if (!load.silent) throw new UnprocessableError(`LOAD <${load.source}> failed: ${(e as Error).message} (LOAD SILENT ignores a source that fails).`);
    }
    text = text.replace(load.placeholder, () => triples);
  }
  return text;
}

/** The document's triples as N-Triples lines (graph names of quad formats dropped: LOAD reads into one graph). */
async function loadDocument(platform: Platform, url: string, maxBytes: number, blankNodePrefix: string): Promise<{ lines: string; bytes: number }> {
  if (maxBytes <= 0) throw new Error(`the documents of one update may hold at most ${MAX_LOAD_BYTES / 1024 / 1024} MiB together`);
  const fetched = await platform.fetcher.fetch(url, { maxBytes, timeoutMs: LOAD_TIMEOUT_MS });
  const format = formatOf(fetched.fileName, fetched.contentType);
  let bytes = 0;
  const counted = (async function* () {
    for await (const chunk of fetched.body) {
      bytes += (chunk as Buffer).length;
      yield chunk as Buffer;
    }
  })();
  const input = format.gzip ? gunzipChecked(counted, fetched.fileName, { ...DEFAULT_GUNZIP_LIMITS, maxBytes }) : counted;
  const out: string[] = [];
  for await (const batch of parseRdf(input, { format: format.format, baseIRI: url, blankNodePrefix, fileName: fetched.fileName })) {
    for (const q of batch) out.push(`${q.subject} ${q.predicate} ${q.object} .`);
  }
  return { lines: out.join('\n'), bytes };
}

/** By the file name, then the Content-Type, else Turtle (which also reads N-Triples). */
function formatOf(fileName: string, contentType: string | undefined): { format: RdfFormat; gzip: boolean } {
  const byName = formatFromPath(fileName);
  if (byName) return byName;
  const byType = contentType ? formatFromMediaType(contentType) : null;
  return { format: byType ?? formatByName('turtle'), gzip: /\.gz$/i.test(fileName) };
}
