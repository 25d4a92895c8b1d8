/**
 * The SHACL validation task: validates a dataset's graphs (or one) against shapes from a URL or a
 * dataset. Shapes and data go into in-memory n3 stores (bounded in statements),
 * rdf-validate-shacl validates, and the report is saved as a Turtle artifact.
 */
import { Readable } from 'node:stream';
import N3 from 'n3';
import SHACLValidator from 'rdf-validate-shacl';
import type { DatasetCore } from '@rdfjs/types';
import { ntQuadToRdfJs, parseNtLine, type NtQuad, type RdfJsFactoryLike } from '../../../rdf/nt.js';
import { parseRdf } from '../../../rdf/parse.js';
import { detectFormat, openDownload, type LoadFormat } from './load-file.js';
import { datasetRef, httpUrl } from './settings-reader.js';
import { blankPrefixOf, datasetOf, download, httpUrlOf, iriOf, TaskFailure, type TaskContext, type TaskServices } from './task-context.js';
import type { TaskTypeDefinition } from './task-type.js';

/** Statements a validation reads at most, data and shapes each. */
export const SHACL_MAX_STATEMENTS = 1_000_000;

const SH = 'http://www.w3.org/ns/shacl#';

const factory = N3.DataFactory as unknown as RdfJsFactoryLike<N3.Term, N3.Quad>;

/** A store of triples (graph names dropped: the union of the graphs read is validated). */
export class TripleCollector {
  readonly store = new N3.Store();
  private count = 0;

  constructor(
    private readonly what: string,
    private readonly max = SHACL_MAX_STATEMENTS,
  ) {}

  /** Adds a canonical N-Triples line (without newline). */
  addLine(line: string): void {
    if (line) this.addQuad(parseNtLine(line));
  }

  addQuad(q: NtQuad): void {
    if (++this.count > this.max) throw new Error(`The ${this.what} hold more than ${this.max} statements, more than a SHACL validation reads.`);
    this.store.addQuad(ntQuadToRdfJs({ ...q, graph: null }, factory));
  }
}

export interface ShaclOutcome {
  conforms: boolean;
  /** Validation results of every severity. */
  violations: number;
  /** The report (sh:ValidationReport and its results) as Turtle. */
  turtle: string;
}

export async function validateShacl(shapes: N3.Store, data: N3.Store): Promise<ShaclOutcome> {
  const validator = new SHACLValidator(shapes as unknown as DatasetCore, {
    importGraph: (url) => {
      throw new Error(`The shapes import <${url.value}> (owl:imports); imports are not followed: put the shapes in one file or graph.`);
    },
  });
  const report = await validator.validate(data as unknown as DatasetCore);
  const writer = new N3.Writer({ prefixes: { sh: SH, rdf: 'http://www.w3.org/1999/02/22-rdf-syntax-ns#', xsd: 'http://www.w3.org/2001/XMLSchema#' } });
  for (const quad of report.dataset as unknown as Iterable<N3.Quad>) writer.addQuad(quad.subject, quad.predicate, quad.object);
  const turtle = await new Promise<string>((resolve, reject) => writer.end((error, result) => (error ? reject(error) : resolve(result))));
  return { conforms: report.conforms, violations: report.results.length, turtle };
}

// ---- The task type ----

/** Shapes files are small. */
const SHAPES_MAX_BYTES = 100 * 1024 * 1024;
const SHACL_REPORT = 'shacl-report.ttl';

export const shaclValidation: TaskTypeDefinition = {
  type: 'shaclValidation',
  title: 'SHACL validation',
  kind: 'data',
  mayRunLong: true,
  check(s, ctx) {
    datasetRef(s, 'dataset', true);
    s.text('graph', { what: 'the graph to validate (an IRI)' });
    const shapes = s.object('shapes', { required: true, what: 'the shapes ({ "url" } or { "dataset", "graph"? })' });
    if (shapes) {
      if (shapes.has('url') === shapes.has('dataset')) {
        ctx.problem(shapes.path, 'invalid', 'Give exactly one of "url" or "dataset" for the shapes.');
      }
      if (shapes.has('url')) httpUrl(shapes, 'url', ctx);
      if (shapes.has('dataset')) datasetRef(shapes, 'dataset', true);
      shapes.text('graph', { what: 'the shapes graph (an IRI)' });
      shapes.finish();
    }
    s.flag('failOnViolation');
    s.finish();
  },
  async run(ctx, services) {
    const data = datasetOf(ctx, ctx.settings.dataset, 'dataset');
    const graph = iriOf(ctx, ctx.settings.graph, 'graph') || null;
    const shapesSetting = (ctx.settings.shapes ?? {}) as Record<string, unknown>;
    const shapes = new TripleCollector('shapes');
    if (shapesSetting.url !== undefined) {
      const url = httpUrlOf(ctx, shapesSetting.url, 'shapes.url');
      const fetched = await download(ctx, services, url, {}, SHAPES_MAX_BYTES);
      try {
        const file = await openDownload(fetched.body, fetched.fileName);
        const format: LoadFormat | null = detectFormat(fetched.fileName, fetched.contentType, file.head);
        if (format?.kind !== 'rdf') {
          throw new TaskFailure(`The shapes at ${url} are not in an RDF format (file "${fetched.fileName}", content type "${fetched.contentType ?? 'none'}"); serve them as Turtle, N-Triples, RDF/XML, JSON-LD, TriG or N-Quads.`);
        }
        const batches = parseRdf(Readable.from(file.body), { format: format.format, baseIRI: url, blankNodePrefix: blankPrefixOf(ctx), fileName: fetched.fileName });
        for await (const batch of batches) for (const q of batch) shapes.addQuad(q);
      } catch (e) {
        fetched.body.destroy();
        throw e instanceof TaskFailure ? e : new TaskFailure(`Reading the shapes from ${url} failed: ${(e as Error).message}`);
      }
    } else {
      const ref = datasetOf(ctx, shapesSetting.dataset, 'shapes.dataset');
      await readGraphsInto(ctx, services, ref, iriOf(ctx, shapesSetting.graph, 'shapes.graph') || null, shapes, 'shapes');
    }
    const dataStore = new TripleCollector('data');
    await readGraphsInto(ctx, services, data, graph, dataStore, 'data');
    ctx.log(`Validating ${dataStore.store.size} statements against ${shapes.store.size} statements of shapes.`);
    let outcome;
    try {
      outcome = await validateShacl(shapes.store, dataStore.store);
    } catch (e) {
      throw new TaskFailure(`The SHACL validation failed: ${(e as Error).message}`);
    }
    const artifact = await ctx.addArtifact(SHACL_REPORT, 'text/turtle', outcome.turtle);
    ctx.log(`${outcome.conforms ? 'The data conforms to the shapes' : `The data does not conform: ${outcome.violations} violation${outcome.violations === 1 ? '' : 's'}`}; the report is "${SHACL_REPORT}" (${artifact.size} bytes).`);
    if (!outcome.conforms && ctx.settings.failOnViolation === true) {
      throw new TaskFailure(`The data does not conform to the shapes: ${outcome.violations} violation${outcome.violations === 1 ? '' : 's'} (see ${SHACL_REPORT}).`);
    }
    return { conforms: outcome.conforms, violations: outcome.violations };
  },
};

/** Reads a dataset's graphs (or one) into a collector, after checking their size. */
async function readGraphsInto(
  ctx: TaskContext,
  services: TaskServices,
  ref: { account: string; dataset: string },
  graphName: string | null,
  into: TripleCollector,
  what: string,
): Promise<void> {
  const { dataset } = await services.access.readableDataset(ctx.caller, ref.account, ref.dataset);
  const { graphs } = await services.catalog.manifest(dataset);
  const chosen = graphName === null ? graphs : graphs.filter((g) => g.graphName === graphName);
  if (graphName !== null && chosen.length === 0) throw new TaskFailure(`Graph <${graphName}> does not exist in ${ref.account}/${ref.dataset}.`);
  const statements = chosen.reduce((n, g) => n + g.numberOfStatements, 0);
  if (statements > SHACL_MAX_STATEMENTS) {
    throw new TaskFailure(`The ${what} (${graphName ? `<${graphName}> of ` : ''}${ref.account}/${ref.dataset}) hold ${statements} statements; a SHACL validation reads at most ${SHACL_MAX_STATEMENTS}.`);
  }
  for (const g of chosen) for await (const line of await services.catalog.lines(g.blobKey)) into.addLine(line);
  ctx.log(`Read ${statements} statements of ${what} from ${graphName ? `<${graphName}> of ` : ''}${ref.account}/${ref.dataset}.`);
}
