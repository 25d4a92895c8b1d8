import { analyzeSparql } from '../../rdf/sparql-analysis.js';
import { formatsFor, type QueryForm } from '../../rdf/formats.js';
import { type SparqlJson } from '../../rdf/sparql-results.js';
import { instantiate, solutionsProbe, type TermValue } from '../../rdf/sparql-template.js';
import type { AccessService } from '../datasets/access-service.js';
import type { AccountRecord } from '../accounts/accounts.js';
import type { Caller } from '../shared/caller.js';
import type { AccessLevel, DatasetRecord } from '../datasets/datasets.js';
import { canReadDataset } from '../datasets/datasets.js';
import { ConflictError, NotFoundError, ServiceUnavailableError, ValidationError } from '../shared/errors.js';
import { collectPage, type Page, type PageRequest } from '../shared/paging.js';
import type { Platform } from '../shared/platform.js';
import {
  assertQueryName,
  checkVariables,
  MAX_QUERY_CHARS,
  type QueryServiceType,
  type QueryVariable,
  type QueryVersionRecord,
  type SavedQueryRecord,
  termValue,
} from './saved-queries.js';
import type { ServiceLifecycle } from '../sparql/service-lifecycle.js';

export const DEFAULT_RUN_PAGE_SIZE = 100;
export const MAX_RUN_PAGE_SIZE = 10_000;

export interface VersionInput {
  query: string;
  output?: string;
  settings?: Record<string, unknown>;
  variables?: QueryVariable[];
  headers?: Record<string, string>;
  ldFrame?: Record<string, unknown>;
}

export interface QueryInput extends VersionInput {
  name: string;
  displayName?: string;
  description?: string;
  accessLevel?: AccessLevel;
  dataset?: string;
  serviceType?: string;
  tags?: string[];
}

/** The query's own fields (not its versions), each optional. */
export type QueryMetaPatch = Partial<Omit<QueryInput, keyof VersionInput>>;

export interface Found {
  query: SavedQueryRecord;
  version: QueryVersionRecord;
  owner: AccountRecord;
  dataset: { dataset: DatasetRecord; owner: AccountRecord } | null;
}

/** A saved query that was renamed: the caller answers with a redirect to its new name. */
export class QueryMovedError extends Error {
  override name = 'QueryMovedError';
  constructor(readonly newName: string) {
    super(`The query was renamed to "${newName}".`);
  }
}

const SERVICE_TYPES: Record<string, QueryServiceType> = { speedy: 'speedy', virtuoso: 'virtuoso', jena: 'jena', Sparql: 'virtuoso', RichSparql: 'jena', sparql: 'virtuoso' };

function serviceTypeOf(value: string | undefined): QueryServiceType {
  const type = SERVICE_TYPES[value ?? 'speedy'];
  if (!type) throw new ValidationError(`serviceConfig.type: use one of speedy (the dataset's own endpoint), virtuoso or jena.`);
  return type;
}

/** Values given for the query's API variables, by name, each as often as it was given (http/ reads them). */
export type QueryValues = ReadonlyMap<string, readonly string[]>;

export interface RunRequest {
  version?: number;
  values: QueryValues;
  page: number;
  pageSize: number;
}

export type RunResult =
  | { kind: 'tabular'; form: QueryForm; results: SparqlJson; hasMore: boolean }
  | { kind: 'graph'; body: string; hasMore: boolean };

/** Saved queries: versioned, shareable, run as an API with variables and pages. */
export class SavedQueryService {
  constructor(
    private readonly platform: Platform,
    private readonly access: AccessService,
    private readonly sparql: ServiceLifecycle,
  ) {}

  private now(): string {
    return this.platform.clock.now().toISOString();
  }

  /** The dataset a query runs against, by id or `account/dataset`; the caller must be able to read it. */
  private async datasetFor(caller: Caller | null, ref: string): Promise<{ dataset: DatasetRecord; owner: AccountRecord }> {
    if (ref.includes('/')) {
      const [account, name] = ref.split('/');
      return this.access.readableDataset(caller, account!, name!);
    }
    const dataset = await this.platform.store.getDatasetById(ref);
    const owner = dataset && (await this.platform.store.getAccount(dataset.ownerUid));
    if (!dataset || !owner || !(await this.access.canReadDataset(caller, dataset, owner))) {
      throw new ValidationError(`dataset: no dataset "${ref}" that you may read.`);
    }
    return { dataset, owner };
  }

  private async visible(caller: Caller | null, query: SavedQueryRecord, owner: AccountRecord): Promise<{ dataset: DatasetRecord; owner: AccountRecord } | null | false> {
    const canSee =
      query.accessLevel === 'private' ? (await this.access.accountAccess(caller, owner)).isMember : canReadDataset(query.accessLevel, caller !== null, false);
    if (!canSee) return false;
    if (!query.datasetId) return null;
    const dataset = await this.platform.store.getDatasetById(query.datasetId);
    const datasetOwner = dataset && (await this.platform.store.getAccount(dataset.ownerUid));
    if (!dataset || !datasetOwner || !(await this.access.canReadDataset(caller, dataset, datasetOwner))) return false;
    return { dataset, owner: datasetOwner };
  }

  /** A query the caller may see, at a version (latest by default); renamed ones throw QueryMovedError. */
  async get(caller: Caller | null, account: string, name: string, version?: number): Promise<Found> {
    const missing = () => new NotFoundError(`Query "${account}/${name}" does not exist.`);
    const owner = await this.platform.store.getAccountByName(account);
    if (!owner) throw missing();
    const query = await this.platform.store.getQuery(owner.uid, name);
    if (!query) {
      const moved = await this.platform.store.queryRedirect(owner.uid, name);
      if (moved) throw new QueryMovedError(moved);
      throw missing();
    }
    const dataset = await this.visible(caller, query, owner);
    if (dataset === false) throw missing();
    const n = version ?? query.numberOfVersions;
    const found = Number.isInteger(n) && n >= 1 && n <= query.numberOfVersions ? await this.platform.store.getQueryVersion(query.id, n) : null;
    if (!found) throw new NotFoundError(`Version ${version} of query "${account}/${name}" does not exist; it has versions 1 to ${query.numberOfVersions}.`);
    return { query, version: found, owner, dataset };
  }

  async list(caller: Caller | null, account: string | null, page: PageRequest): Promise<Page<Found>> {
    let ownerUid: string | null = null;
    if (account !== null) ownerUid = (await this.access.account(account)).uid;
    const owners = new Map<string, Promise<AccountRecord | null>>();
    const ownerOf = (uid: string) => owners.get(uid) ?? owners.set(uid, this.platform.store.getAccount(uid)).get(uid)!;
    const datasets = new Map<string, { dataset: DatasetRecord; owner: AccountRecord } | null>();
    const result = await collectPage(
      (r) => this.platform.store.listQueries(ownerUid, r),
      async (q) => {
        const owner = await ownerOf(q.ownerUid);
        if (!owner) return false;
        const ds = await this.visible(caller, q, owner);
        if (ds === false) return false;
        datasets.set(q.id, ds);
        return true;
      },
      page,
    );
    const items = await Promise.all(
      result.items.map(async (query) => ({
        query,
        version: (await this.platform.store.getQueryVersion(query.id, query.numberOfVersions))!,
        owner: (await ownerOf(query.ownerUid))!,
        dataset: datasets.get(query.id) ?? null,
      })),
    );
    return { items: items.filter((i) => i.version), next: result.next };
  }

  private async checkVersion(input: VersionInput): Promise<Omit<QueryVersionRecord, 'queryId' | 'version' | 'createdAt' | 'accountName'>> {
    if (typeof input.query !== 'string' || !input.query.trim()) throw new ValidationError('requestConfig.payload.query: the query string is required.');
    if (input.query.length > MAX_QUERY_CHARS) throw new ValidationError(`requestConfig.payload.query: at most ${MAX_QUERY_CHARS} characters.`);
    await analyzeSparql(input.query, undefined, 'saved query');
    return {
      query: input.query,
      renderConfig: { output: input.output ?? 'Table', ...(input.settings ? { settings: input.settings } : {}) },
      variables: checkVariables(input.variables ?? []),
      headers: input.headers,
      ldFrame: input.ldFrame,
    };
  }

  async create(caller: Caller | null, account: string, input: QueryInput): Promise<Found> {
    const owner = await this.access.account(account);
    await this.access.require(caller, owner, 'writeDatasets', 'save queries');
    const name = assertQueryName(input.name);
    const version = await this.checkVersion(input);
    const dataset = input.dataset ? await this.datasetFor(caller, input.dataset) : null;
    const now = this.now();
    const query: SavedQueryRecord = {
      id: this.platform.ids.newId(),
      ownerUid: owner.uid,
      name,
      displayName: input.displayName,
      description: input.description ?? '',
      accessLevel: input.accessLevel ?? 'private',
      datasetId: dataset?.dataset.id,
      serviceType: serviceTypeOf(input.serviceType),
      tags: input.tags ?? [],
      numberOfVersions: 1,
      createdAt: now,
      updatedAt: now,
    };
    const first: QueryVersionRecord = { ...version, queryId: query.id, version: 1, createdAt: now, accountName: caller!.accountName };
    // The version first: a query record never points at a missing version.
    await this.platform.store.putQueryVersion(first);
    await this.platform.store.createQuery(query);
    return { query, version: first, owner, dataset };
  }

  private async writable(caller: Caller | null, account: string, name: string): Promise<Found> {
    const found = await this.get(caller, account, name);
    await this.access.require(caller, found.owner, 'writeDatasets', 'change queries');
    return found;
  }

  async addVersion(caller: Caller | null, account: string, name: string, input: VersionInput): Promise<Found> {
    const found = await this.writable(caller, account, name);
    const checked = await this.checkVersion(input);
    for (let attempt = 0; attempt < 8; attempt++) {
      const query = (await this.platform.store.getQuery(found.owner.uid, found.query.name)) ?? found.query;
      const now = this.now();
      const version: QueryVersionRecord = { ...checked, queryId: query.id, version: query.numberOfVersions + 1, createdAt: now, accountName: caller!.accountName };
      try {
        await this.platform.store.putQueryVersion(version);
      } catch (e) {
        if (e instanceof ConflictError) continue;
        throw e;
      }
      const next = { ...query, numberOfVersions: version.version, updatedAt: now };
      await this.platform.store.replaceQuery(next, query.updatedAt);
      return { ...found, query: next, version };
    }
    throw new ConflictError('The query is being saved by someone else right now; retry.');
  }

  async update(caller: Caller | null, account: string, name: string, patch: QueryMetaPatch): Promise<Found> {
    const found = await this.writable(caller, account, name);
    let next: SavedQueryRecord = { ...found.query, updatedAt: this.now() };
    if (patch.displayName !== undefined) next.displayName = patch.displayName;
    if (patch.description !== undefined) next.description = patch.description;
    if (patch.accessLevel !== undefined) next.accessLevel = patch.accessLevel;
    if (patch.tags !== undefined) next.tags = patch.tags;
    if (patch.serviceType !== undefined) next.serviceType = serviceTypeOf(patch.serviceType);
    let dataset = found.dataset;
    if (patch.dataset !== undefined) {
      dataset = await this.datasetFor(caller, patch.dataset);
      next.datasetId = dataset.dataset.id;
    }
    if (patch.name !== undefined && patch.name !== found.query.name) {
      assertQueryName(patch.name);
      await this.platform.store.replaceQuery(next, found.query.updatedAt);
      next = await this.platform.store.renameQuery(next, patch.name, this.now());
    } else {
      await this.platform.store.replaceQuery(next, found.query.updatedAt);
    }
    return { ...found, query: next, dataset };
  }

  async delete(caller: Caller | null, account: string, name: string): Promise<void> {
    const found = await this.writable(caller, account, name);
    await this.platform.store.deleteQuery(found.query);
  }

  /** Values of the API variables from the request: given, else the default; required ones must be set. */
  bindings(variables: QueryVariable[], values: QueryValues): Map<string, TermValue> {
    const bound = new Map<string, TermValue>();
    for (const v of variables) {
      const given = values.get(v.name) ?? [];
      if (given.length > 1) throw new ValidationError(`${v.name}: give this variable at most once.`);
      const value = given[0] !== undefined ? given[0] : v.defaultValue;
      if (value === undefined || value === '') {
        if (v.required) throw new ValidationError(`${v.name}: this variable is required.`);
        continue;
      }
      bound.set(v.name, termValue(v, value));
    }
    return bound;
  }

  async text(caller: Caller | null, account: string, name: string, version: number | undefined, values: QueryValues): Promise<string> {
    const found = await this.get(caller, account, name, version);
    return (await instantiate(found.version.query, this.bindings(found.version.variables, values))) ?? found.version.query;
  }

  /** Where the query runs: the dataset's own endpoint, or its running service of the type. */
  endpointOf(found: Found, apiUrl: string, serviceName?: string): string {
    if (!found.dataset) return '';
    const base = `${apiUrl}/datasets/${found.dataset.owner.accountName}/${found.dataset.dataset.name}`;
    return found.query.serviceType === 'speedy' || !serviceName ? `${base}/sparql` : `${base}/services/${serviceName}/sparql`;
  }

  async serviceName(found: Found): Promise<string | undefined> {
    if (!found.dataset || found.query.serviceType === 'speedy') return undefined;
    const services = await this.platform.store.listServices(found.dataset.dataset.id);
    return services.find((s) => s.type === found.query.serviceType && (s.status === 'running' || s.status === 'updating'))?.name;
  }

  private async execute(caller: Caller | null, found: Found, query: string, format: string): Promise<string> {
    if (!found.dataset) throw new ValidationError('The query has no dataset to run against; set one with PATCH {"dataset": ...}.');
    const { dataset, owner } = found.dataset;
    const analysis = await analyzeSparql(query, undefined, 'saved query');
    const request = { query, format, queryDefinesDataset: analysis.kind === 'query' && analysis.definesDataset };
    if (found.query.serviceType === 'speedy') return this.sparql.queryDataset(caller, owner.accountName, dataset.name, request);
    const service = await this.serviceName(found);
    if (!service) {
      throw new ServiceUnavailableError(`The dataset has no running ${found.query.serviceType} service; start one to run this query.`);
    }
    return this.sparql.query(caller, owner.accountName, dataset.name, service, request);
  }

  /** The form of a found version's query (`update` for update queries). */
  async formOf(found: Found): Promise<QueryForm | 'update'> {
    const analysis = await analyzeSparql(found.version.query, undefined, 'saved query');
    return analysis.kind === 'update' ? 'update' : analysis.form;
  }

  /** Runs a found version with variables, one page at a time. `graphFormat` is the engine format for CONSTRUCT/DESCRIBE. */
  async run(caller: Caller | null, found: Found, request: RunRequest, graphFormat: string): Promise<RunResult> {
    const analysis = await analyzeSparql(found.version.query, undefined, 'saved query');
    if (analysis.kind === 'update') throw new ValidationError('This saved query is an update; run it with POST.');
    const values = this.bindings(found.version.variables, request.values);
    const page = { page: request.page, pageSize: request.pageSize };
    if (analysis.form === 'select' || analysis.form === 'ask') {
      const text = analysis.form === 'ask' ? await instantiate(found.version.query, values) : await instantiate(found.version.query, values, page);
      if (text === null) return { kind: 'tabular', form: analysis.form, results: { head: { vars: [] }, results: { bindings: [] } }, hasMore: false };
      const results = JSON.parse(await this.execute(caller, found, text, formatsFor('select')[0]!.engineFormat)) as SparqlJson;
      const rows = results.results?.bindings;
      const hasMore = analysis.form === 'select' && !!rows && rows.length > request.pageSize;
      if (rows && hasMore) rows.length = request.pageSize;
      return { kind: 'tabular', form: analysis.form, results, hasMore };
    }
    const text = await instantiate(found.version.query, values, page, 0);
    if (text === null) return { kind: 'graph', body: '', hasMore: false };
    const body = await this.execute(caller, found, text, graphFormat);
    const probe = JSON.parse(
      await this.execute(caller, found, await solutionsProbe(found.version.query, values, request.page * request.pageSize), formatsFor('select')[0]!.engineFormat),
    ) as SparqlJson;
    return { kind: 'graph', body, hasMore: (probe.results?.bindings.length ?? 0) > 0 };
  }

  /** POST .../run of an update query: applied to the dataset as a new version (needs write access). */
  async runUpdate(caller: Caller | null, found: Found, request: RunRequest, apiUrl: string) {
    const analysis = await analyzeSparql(found.version.query, undefined, 'saved query');
    if (analysis.kind !== 'update') throw new ValidationError('This saved query is not an update; run it with GET.');
    if (!found.dataset) throw new ValidationError('The query has no dataset to run against.');
    const text = (await instantiate(found.version.query, this.bindings(found.version.variables, request.values))) ?? found.version.query;
    return this.sparql.updateDataset(caller, found.dataset.owner.accountName, found.dataset.dataset.name, text, apiUrl);
  }
}
