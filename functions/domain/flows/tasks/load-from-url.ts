/**
 * Load from URL: downloads a file (RDF, CSV, TSV or XML, gzip or not) into a graph of a dataset,
 * creating the dataset when asked. Reading the file is `load-file.ts`; writing it `graph-writes.ts`.
 */
import type { DatasetRecord } from '../../datasets/datasets.js';
import { ConflictError, NotFoundError } from '../../shared/errors.js';
import { GraphStager, swapInGraphs } from './graph-writes.js';
import { describeFormat, detectFormat, formatOfSetting, openDownload, readAsLines } from './load-file.js';
import { datasetRef, httpUrl } from './settings-reader.js';
import {
  blankPrefixOf,
  datasetOf,
  download,
  headersOf,
  httpUrlOf,
  iriOf,
  TaskFailure,
  type TaskContext,
  type TaskServices,
} from './task-context.js';
import type { TaskTypeDefinition } from './task-type.js';

export const LOAD_FORMATS = ['auto', 'turtle', 'trig', 'n-triples', 'n-quads', 'rdf-xml', 'json-ld', 'csv', 'tsv', 'xml'] as const;

/** A Load from URL task reads at most this many bytes (after decompression they may be more). */
const LOAD_MAX_BYTES = 1024 * 1024 * 1024;
/** Graphs one file may write (TriG, N-Quads, JSON-LD name their graphs). */
const MAX_LOAD_GRAPHS = 5000;

export const loadFromUrl: TaskTypeDefinition = {
  type: 'loadFromUrl',
  title: 'Load from URL',
  kind: 'data',
  mayRunLong: true,
  check(s, ctx) {
    httpUrl(s, 'url', ctx);
    datasetRef(s, 'dataset', true);
    s.text('graph', { what: 'the graph name (an IRI)' });
    s.choice('format', LOAD_FORMATS);
    s.textMap('headers', { what: 'a header value' });
    s.flag('createDataset');
    s.flag('overwrite');
    s.finish();
  },
  async run(ctx, services) {
    const url = httpUrlOf(ctx, ctx.settings.url, 'url');
    const target = datasetOf(ctx, ctx.settings.dataset, 'dataset');
    const graphName = iriOf(ctx, ctx.settings.graph, 'graph') || url;
    const explicit = formatOfSetting(String(ctx.settings.format ?? 'auto'));
    const overwrite = ctx.settings.overwrite === true;
    const dataset = await targetDataset(ctx, services, target, ctx.settings.createDataset === true);
    const fetched = await download(ctx, services, url, headersOf(ctx), LOAD_MAX_BYTES);
    const stager = new GraphStager(services.platform, dataset.id, MAX_LOAD_GRAPHS);
    stager.touch(graphName);
    let staged;
    try {
      const file = await openDownload(fetched.body, fetched.fileName);
      const format = explicit ?? detectFormat(fetched.fileName, fetched.contentType, file.head);
      if (!format) {
        throw new TaskFailure(`Cannot tell the format of ${url} (file "${fetched.fileName}", content type "${fetched.contentType ?? 'none'}"); set the task's format.`);
      }
      ctx.log(`Reading "${fetched.fileName}" as ${describeFormat(format)}${explicit ? '' : ' (detected)'}.`);
      const lines = readAsLines(file.body, format, { graph: graphName, baseIRI: url, blankNodePrefix: blankPrefixOf(ctx), fileName: fetched.fileName });
      for await (const batch of lines) {
        const graph = batch.graph ?? graphName;
        for (const line of batch.lines) {
          const draining = stager.add(graph, line);
          if (draining) await draining;
        }
      }
      staged = await stager.finish();
    } catch (e) {
      fetched.body.destroy();
      await stager.discard();
      throw e instanceof TaskFailure ? e : new TaskFailure(`Loading ${url} failed: ${(e as Error).message}`);
    }
    const entries = await swapInGraphs(services.platform, services.catalog, dataset, staged, overwrite);
    const statements = staged.reduce((n, s) => n + s.statements, 0);
    for (const [i, part] of staged.entries()) {
      if (part.graphName !== graphName && part.statements === 0) continue;
      ctx.log(`${overwrite ? 'Replaced' : 'Added to'} <${part.graphName}> in ${target.account}/${target.dataset}: ${part.statements} statements loaded, ${entries[i]!.numberOfStatements} in the graph.`);
    }
    const graphs = staged.filter((s) => s.graphName !== graphName).map((s) => s.graphName);
    return { graph: graphName, statements, ...(graphs.length > 0 ? listedGraphs([graphName, ...graphs]) : {}) };
  },
};

/** The dataset a load writes to, created (private) when missing and allowed. */
async function targetDataset(ctx: TaskContext, services: TaskServices, ref: { account: string; dataset: string }, create: boolean): Promise<DatasetRecord> {
  const writable = async () => (await services.access.writableDataset(ctx.caller, ref.account, ref.dataset, 'write graphs')).dataset;
  try {
    return await writable();
  } catch (e) {
    if (!create || !(e instanceof NotFoundError) || !(await services.platform.store.getAccountByName(ref.account))) throw e;
  }
  try {
    const { dataset } = await services.datasets.create(ctx.caller, ref.account, { name: ref.dataset, accessLevel: 'private' }, ctx.apiUrl);
    ctx.log(`Created the dataset ${ref.account}/${ref.dataset} (private).`);
    return dataset;
  } catch (e) {
    // Created meanwhile (or there but not visible to the starter): the ordinary check answers.
    if (e instanceof ConflictError) return writable();
    throw e;
  }
}

/**
 * The output travels in the run's state (Step Functions: 256 KB for the whole run document): a
 * file naming many graphs lists the first ones, up to 32 KB of names, and counts the rest.
 */
const MAX_LISTED_GRAPH_BYTES = 32 * 1024;
function listedGraphs(names: string[]): { graphs: string[]; graphsNotListed?: number } {
  const listed: string[] = [];
  let bytes = 0;
  for (const name of names) {
    bytes += Buffer.byteLength(name, 'utf8') + 3;
    if (bytes > MAX_LISTED_GRAPH_BYTES) break;
    listed.push(name);
  }
  return listed.length === names.length ? { graphs: listed } : { graphs: listed, graphsNotListed: names.length - listed.length };
}
