import { Readable } from 'node:stream';
import type { AccessService } from '../datasets/access-service.js';
import { graphBlobKey, type GraphCatalog } from '../data/graph-catalog.js';
import { GraphBlobWriter } from '../data/graph-writer.js';
import type { GraphEntry } from '../data/graphs.js';
import { MAX_RUN_PAGE_SIZE, type Found, type SavedQueryService } from '../queries/saved-query-service.js';
import type { Caller } from '../shared/caller.js';
import { DomainError, NotFoundError, ValidationError } from '../shared/errors.js';
import { assertAbsoluteIri } from '../shared/names.js';
import type { Platform } from '../shared/platform.js';
import { formatByName } from '../../rdf/formats.js';
import { parseRdf } from '../../rdf/parse.js';
import type { NtQuad } from '../../rdf/nt.js';
import { MAX_PIPELINE_QUERIES, MAX_PIPELINE_STATEMENTS, pipelineKey, type PipelineConfig, type PipelineRecord } from './pipelines.js';

const NT = formatByName('ntriples');

const splitRef = (ref: string, field: string): [string, string] => {
  const parts = ref.split('/');
  if (parts.length !== 2 || !parts[0] || !parts[1]) throw new ValidationError(`${field}: expected "account/name", got "${ref}".`);
  return [parts[0], parts[1]];
};

/**
 * Pipelines: runs saved CONSTRUCT/DESCRIBE queries (through the saved-query run path, page by page)
 * against a source dataset and replaces one graph of the target dataset with their results, in one
 * catalog swap: the target keeps its previous state when any query fails. The work is bounded
 * (MAX_PIPELINE_QUERIES queries, MAX_PIPELINE_STATEMENTS statements), so it runs inside the request.
 */
export class PipelineService {
  constructor(
    private readonly platform: Platform,
    private readonly access: AccessService,
    private readonly savedQueries: SavedQueryService,
    private readonly catalog: GraphCatalog,
  ) {}

  private async save(p: PipelineRecord): Promise<void> {
    await this.platform.blobs.data.put(pipelineKey(p.ownerUid, p.id), JSON.stringify(p), { contentType: 'application/json' });
  }

  private async member(caller: Caller | null, account: string, what: string) {
    const owner = await this.platform.store.getAccountByName(account);
    if (!owner || !(await this.access.accountAccess(caller, owner)).isMember) {
      if (!caller) this.access.requireSignedIn(caller, what);
      throw new NotFoundError(`Account "${account}" does not exist or you are not one of its members.`);
    }
    return owner;
  }

  async get(caller: Caller | null, account: string, id: string): Promise<PipelineRecord> {
    const owner = await this.member(caller, account, 'see pipelines');
    const missing = () => new NotFoundError(`Pipeline "${id}" of "${account}" does not exist.`);
    if (!/^[A-Za-z0-9_-]{1,64}$/.test(id)) throw missing();
    const stream = await this.platform.blobs.data.get(pipelineKey(owner.uid, id));
    if (!stream) throw missing();
    const chunks: Buffer[] = [];
    for await (const chunk of stream) chunks.push(Buffer.from(chunk));
    return JSON.parse(Buffer.concat(chunks).toString('utf8')) as PipelineRecord;
  }

  /** Checks everything, then runs the queries and writes the graph; answers the pipeline as it ended. */
  async run(caller: Caller | null, account: string, config: PipelineConfig, apiUrl: string): Promise<PipelineRecord> {
    const owner = await this.member(caller, account, 'run pipelines');
    const signedIn = this.access.requireSignedIn(caller, 'run pipelines');
    if (config.queries.length === 0) throw new ValidationError('queries: give at least one query.');
    if (config.queries.length > MAX_PIPELINE_QUERIES) throw new ValidationError(`queries: at most ${MAX_PIPELINE_QUERIES} queries per pipeline.`);
    const [srcAcc, srcName] = splitRef(config.sourceDataset, 'sourceDataset');
    const [dstAcc, dstName] = splitRef(config.targetDataset, 'targetDataset');
    const source = await this.access.readableDataset(caller, srcAcc, srcName);
    const target = await this.access.writableDataset(caller, dstAcc, dstName, 'write pipeline results into datasets');
    const graphName = config.targetGraphName ?? `${apiUrl}/${target.owner.accountName}/${target.dataset.name}/graphs/pipeline`;
    assertAbsoluteIri(graphName, 'targetGraphName');
    const found: Found[] = [];
    for (const [i, q] of config.queries.entries()) {
      const [qAcc, qName] = splitRef(q.name, `queries[${i}].name`);
      const f = await this.savedQueries.get(caller, qAcc, qName, q.version);
      const form = await this.savedQueries.formOf(f);
      if (form !== 'construct' && form !== 'describe') {
        throw new ValidationError(`queries[${i}]: "${q.name}" is a ${form} query; pipelines run CONSTRUCT and DESCRIBE queries only.`);
      }
      found.push({ ...f, dataset: source });
    }
    const id = this.platform.ids.newId();
    const now = this.platform.clock.now().toISOString();
    const record: PipelineRecord = {
      id,
      ownerUid: owner.uid,
      ownerName: owner.accountName,
      createdBy: signedIn.uid,
      createdAt: now,
      updatedAt: now,
      status: 'running',
      progress: 0,
      config: { ...config, targetGraphName: graphName },
      jobs: found.map((f, i) => ({
        id: `${id}-${i}`,
        status: 'pending',
        progress: 0,
        query: { owner: f.owner.accountName, name: f.query.name, version: f.version.version },
        statements: 0,
      })),
    };
    await this.save(record);
    const key = graphBlobKey(target.dataset.id, this.platform.ids.newId());
    const writer = new GraphBlobWriter(this.platform.blobs.data, key);
    // Highest priority first; equal priorities keep the order given.
    const order = found.map((_, i) => i).sort((a, b) => (config.queries[b]!.priority ?? 0) - (config.queries[a]!.priority ?? 0));
    let current = -1;
    try {
      for (const [done, i] of order.entries()) {
        current = i;
        const job = record.jobs[i]!;
        job.status = 'running';
        const values = new Map(Object.entries(config.queries[i]!.variables ?? {}).map(([k, v]) => [k, [v]]));
        for (let page = 1; ; page++) {
          const result = await this.savedQueries.run(caller, found[i]!, { values, page, pageSize: MAX_RUN_PAGE_SIZE }, NT.engineFormat!);
          if (result.kind !== 'graph') throw new ValidationError(`${job.query.owner}/${job.query.name} did not give a graph.`);
          for await (const batch of parseRdf(Readable.from([result.body]), { format: NT, blankNodePrefix: `p${id.slice(0, 6)}q${i}p${page}x`, fileName: job.query.name })) {
            for (const quad of batch as NtQuad[]) {
              const draining = writer.add(`${quad.subject} ${quad.predicate} ${quad.object} .`);
              if (draining) await draining;
              job.statements++;
            }
          }
          if (writer.statements > MAX_PIPELINE_STATEMENTS) {
            throw new ValidationError(`The pipeline gives more than ${MAX_PIPELINE_STATEMENTS} statements, more than one pipeline may write.`);
          }
          if (!result.hasMore) break;
        }
        job.status = 'finished';
        job.progress = 1;
        record.progress = (done + 1) / (order.length + 1);
      }
      await writer.end();
      const importedAt = this.platform.clock.now().toISOString();
      const entry: GraphEntry = { id: this.platform.ids.newId(), graphName, numberOfStatements: writer.statements, importedAt, blobKey: key };
      const swapped = await this.catalog.swap(target.dataset.id, async (m) => ({ graphs: [...m.graphs.filter((g) => g.graphName !== graphName), entry] }));
      await this.catalog.collect(target.dataset.id, swapped.previous);
      record.status = 'finished';
      record.progress = 1;
      record.statements = writer.statements;
    } catch (e) {
      writer.abort();
      await this.platform.blobs.data.delete(key).catch(() => {});
      const message = e instanceof DomainError ? e.message : 'The query failed to run.';
      record.status = 'error';
      record.error = { message };
      const job = record.jobs[current];
      if (job) {
        job.status = 'error';
        job.error = { message };
      }
      for (const j of record.jobs) if (j.status === 'pending') j.status = 'cancelled';
    }
    record.updatedAt = this.platform.clock.now().toISOString();
    await this.save(record);
    return record;
  }
}
