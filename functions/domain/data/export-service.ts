import { Readable } from 'node:stream';
import { createGzip } from 'node:zlib';
import type { RdfFormat } from '../../rdf/formats.js';
import { ntIri, ntLinesToBatches, parseNtLine, type NtQuad } from '../../rdf/nt.js';
import { serializeRdf } from '../../rdf/serialize.js';
import { trigFromCanonicalLines, turtleFromCanonicalLines, type CanonicalGraphText } from '../../rdf/serialize-lines.js';
import type { AccessService } from '../datasets/access-service.js';
import type { Caller } from '../shared/caller.js';
import { NotFoundError, ValidationError } from '../shared/errors.js';
import type { GraphCatalog } from './graph-catalog.js';
import type { GraphEntry } from './graphs.js';
import { assertAbsoluteIri } from '../shared/names.js';

const BATCH = 2000;
/** Describe: incoming statements are bounded; blank nodes are followed this deep. */
export const DESCRIBE_MAX_INCOMING = 100;
const DESCRIBE_MAX_DEPTH = 8;
const DESCRIBE_MAX_STATEMENTS = 10_000;


/** Export of graphs in any serialization, and the linked-data browser's describe. Streams throughout. */
export class ExportService {
  constructor(
    private readonly access: AccessService,
    private readonly catalog: GraphCatalog,
  ) {}

  private async graphs(caller: Caller | null, account: string, datasetName: string, graphName: string | null) {
    const { dataset } = await this.access.readableDataset(caller, account, datasetName);
    const { graphs } = await this.catalog.manifest(dataset);
    if (graphName === null) return { dataset, graphs };
    const graph = graphs.find((g) => g.graphName === graphName);
    if (!graph) throw new NotFoundError(`Graph <${graphName}> does not exist in ${account}/${datasetName}.`);
    return { dataset, graphs: [graph] };
  }

  /** The dataset's graphs (or one) as a byte stream in `format`, gzip-compressed when asked. */
  async download(
    caller: Caller | null,
    account: string,
    datasetName: string,
    options: { graphName: string | null; format: RdfFormat; gzip: boolean },
  ): Promise<Readable> {
    const { dataset, graphs } = await this.graphs(caller, account, datasetName, options.graphName);
    let body: Readable;
    if (options.format.name === 'ntriples') {
      // Stored blobs are canonical N-Triples: concatenating them is the export.
      body = Readable.from(this.rawLines(graphs));
    } else if (options.format.name === 'nquads') {
      body = Readable.from(this.quadLines(graphs));
    } else if (options.format.name === 'trig') {
      // Graph blocks holding the stored lines as they are: little more than decompressing.
      body = Readable.from(trigFromCanonicalLines(this.graphTexts(graphs), { prefixes: dataset.prefixes }), { objectMode: false });
    } else if (options.format.name === 'turtle') {
      // Written straight from the stored lines, without statement objects in between.
      const texts = this.graphTexts(graphs);
      body = Readable.from(turtleFromCanonicalLines(texts, { prefixes: dataset.prefixes, trig: false }), { objectMode: false, highWaterMark: 64 * 1024 });
    } else {
      body = serializeRdf(this.quadBatches(graphs), { format: options.format, prefixes: dataset.prefixes });
    }
    return options.gzip ? body.pipe(createGzip({ level: 6 })) : body;
  }

  private async *rawLines(graphs: GraphEntry[]): AsyncGenerator<Buffer> {
    for (const g of graphs) for await (const chunk of await this.catalog.text(g.blobKey)) yield chunk as Buffer;
  }

  private async *graphTexts(graphs: GraphEntry[]): AsyncGenerator<CanonicalGraphText> {
    for (const g of graphs) yield { graph: ntIri(g.graphName), text: await this.catalog.text(g.blobKey) };
  }

  private quadLines(graphs: GraphEntry[]): AsyncGenerator<string> {
    return this.catalog.nquads({ graphs });
  }


  private async *quadBatches(graphs: GraphEntry[]): AsyncGenerator<NtQuad[]> {
    for (const g of graphs) yield* ntLinesToBatches(await this.catalog.text(g.blobKey), ntIri(g.graphName), BATCH);
  }

  /**
   * The resource's outgoing statements, blank-node objects followed to their end (bounded depth),
   * and at most DESCRIBE_MAX_INCOMING incoming statements, over all graphs, as N-Triples.
   */
  async describe(caller: Caller | null, account: string, datasetName: string, resource: string): Promise<string> {
    if (!resource) throw new ValidationError('resource: give the IRI of the resource to describe.');
    assertAbsoluteIri(resource, 'resource');
    const { graphs } = await this.graphs(caller, account, datasetName, null);
    const subject = ntIri(resource);
    const out = new Set<string>();
    let incoming = 0;
    let frontier = new Set([subject]);
    const visited = new Set<string>();
    for (let depth = 0; depth < DESCRIBE_MAX_DEPTH && frontier.size > 0 && out.size < DESCRIBE_MAX_STATEMENTS; depth++) {
      const next = new Set<string>();
      for (const f of frontier) visited.add(f);
      for (const g of graphs) {
        for await (const line of await this.catalog.lines(g.blobKey)) {
          if (!line) continue;
          const space = line.indexOf(' ');
          const s = line.slice(0, space);
          if (frontier.has(s)) {
            out.add(line);
            const q = parseNtLine(line);
            if (q.object.startsWith('_:') && !visited.has(q.object)) next.add(q.object);
          } else if (depth === 0 && incoming < DESCRIBE_MAX_INCOMING && line.endsWith(` ${subject} .`)) {
            if (!out.has(line)) {
              out.add(line);
              incoming++;
            }
          }
          if (out.size >= DESCRIBE_MAX_STATEMENTS) break;
        }
      }
      frontier = next;
    }
    return out.size ? `${[...out].join('\n')}\n` : '';
  }
}
