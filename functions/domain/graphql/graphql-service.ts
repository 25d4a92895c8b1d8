import type { Quad } from '@rdfjs/types';
import { DataFactory } from 'n3';
import {
  type DocumentNode,
  execute,
  type FragmentDefinitionNode,
  getOperationAST,
  GraphQLError,
  type GraphQLFormattedError,
  type GraphQLSchema,
  Kind,
  parse,
  specifiedRules,
  validate,
  validateSchema,
} from 'graphql';
import type { Caller } from '../shared/caller.js';
import { ValidationError } from '../shared/errors.js';
import type { ServiceLifecycle } from '../sparql/service-lifecycle.js';
import { isOutOfSync } from '../sparql/service-types.js';
import { LevelLoader, type RunSelect } from './batch.js';
import { MAX_COST, MAX_DEPTH, measure } from './limits.js';
import { GRAPHQL_NAME, SH } from './names.js';
import { buildSchema, type ExecutionContext } from './schema.js';
import { schemaModelOf } from './shapes.js';
import { resultRows, type ResultTerm } from './sparql-text.js';

/**
 * GraphQL over a dataset (issue 16). Which endpoint answers: the dataset's first running SPARQL
 * service (by creation; `updating` ones still serve their snapshot), else the dataset's own SPARQL
 * endpoint over its current graphs, so every dataset the caller may read has a GraphQL endpoint.
 * The schema is generated from the SHACL shapes that endpoint holds and cached per (dataset,
 * endpoint, snapshot): a sync or an import that changes the shapes gives a new schema; requests
 * on the same snapshot reuse it. Access is the dataset's: `list` answers 404 to outsiders.
 */

const RESULTS_JSON = 'application/sparql-results+json';
const SPARQL_TYPES = new Set(['virtuoso', 'jena']);
/** Schemas kept per process (the most recently used). */
const MAX_CACHED_SCHEMAS = 16;
/** Shape statements read at most; more is reported in the status. */
const MAX_SHAPE_STATEMENTS = 100_000;
export const MAX_QUERY_LENGTH = 100_000;
const MAX_TOKENS = 20_000;

const SHAPES_QUERY = `PREFIX sh: <${SH}>
SELECT ?s ?p ?o WHERE {
  { ?s a sh:NodeShape . ?s ?p ?o }
  UNION { ?s sh:targetClass ?c . ?s ?p ?o }
  UNION { ?shape sh:targetClass ?c . ?shape sh:property ?s . ?s ?p ?o }
  UNION { ?shape a sh:NodeShape . ?shape sh:property ?s . ?s ?p ?o }
  UNION { VALUES ?p { <${GRAPHQL_NAME}> } ?s ?p ?o }
} LIMIT ${MAX_SHAPE_STATEMENTS + 1}`;

interface Built {
  schema: GraphQLSchema;
  errors: string[];
  /** Documents parsed and validated against this schema, by query text (the most recent few). */
  documents: Map<string, DocumentNode>;
}

/** Valid documents kept per schema, and the longest query text kept. */
const MAX_CACHED_DOCUMENTS = 64;
const MAX_CACHED_QUERY_LENGTH = 10_000;

interface Source {
  cacheKey: string;
  run: RunSelect;
  service: string | null;
  outOfSync: boolean;
}

export interface GraphqlRequest {
  query: string;
  variables?: Record<string, unknown> | null;
  operationName?: string | null;
}

/** What the route answers: a GraphQL response (200), or request errors (400). */
export type GraphqlOutcome =
  | { kind: 'response'; body: { data?: unknown; errors?: GraphQLFormattedError[]; extensions: Record<string, unknown> } }
  | { kind: 'request-error'; errors: GraphQLFormattedError[] };

const { namedNode, blankNode, literal, quad } = DataFactory;

function termOf(t: ResultTerm) {
  if (t.type === 'uri') return namedNode(t.value);
  if (t.type === 'bnode') return blankNode(t.value);
  return literal(t.value, t['xml:lang'] ?? (t.datatype ? namedNode(t.datatype) : undefined));
}

export class GraphqlService {
  private readonly schemas = new Map<string, Promise<Built>>();

  constructor(private readonly sparql: ServiceLifecycle) {}

  private async source(caller: Caller | null, account: string, datasetName: string): Promise<Source> {
    const { dataset, services } = await this.sparql.list(caller, account, datasetName);
    const service = services.find((s) => SPARQL_TYPES.has(s.type) && (s.status === 'running' || s.status === 'updating'));
    if (service) {
      return {
        cacheKey: `${dataset.id} service:${service.id} ${service.snapshot.manifestKey ?? 'empty'}`,
        run: (query, format) => this.sparql.query(caller, account, datasetName, service.name, { query, format }),
        service: service.name,
        outOfSync: isOutOfSync(service, dataset.graphsManifest),
      };
    }
    return {
      cacheKey: `${dataset.id} dataset ${dataset.graphsManifest ?? 'empty'}`,
      run: (query, format) => this.sparql.queryDataset(caller, account, datasetName, { query, format }),
      service: null,
      outOfSync: false,
    };
  }

  private built(source: Source): Promise<Built> {
    let built = this.schemas.get(source.cacheKey);
    if (built) {
      // Most recently used last: the oldest goes first when the cache is full.
      this.schemas.delete(source.cacheKey);
      this.schemas.set(source.cacheKey, built);
      return built;
    }
    if (this.schemas.size >= MAX_CACHED_SCHEMAS) this.schemas.delete(this.schemas.keys().next().value!);
    built = this.build(source.run);
    this.schemas.set(source.cacheKey, built);
    built.catch(() => this.schemas.get(source.cacheKey) === built && this.schemas.delete(source.cacheKey));
    return built;
  }

  private async build(run: RunSelect): Promise<Built> {
    const rows = resultRows(await run(SHAPES_QUERY, RESULTS_JSON));
    const quads: Quad[] = [];
    for (const row of rows.slice(0, MAX_SHAPE_STATEMENTS)) {
      if (row.s && row.p && row.o && row.s.type !== 'literal' && row.p.type === 'uri') quads.push(quad(termOf(row.s) as never, namedNode(row.p.value), termOf(row.o)));
    }
    const model = schemaModelOf(quads);
    if (rows.length > MAX_SHAPE_STATEMENTS) model.errors.unshift(`The shapes hold more than ${MAX_SHAPE_STATEMENTS} statements; only the first ${MAX_SHAPE_STATEMENTS} were read.`);
    const schema = buildSchema(model);
    const problems = validateSchema(schema);
    if (problems.length > 0) throw new Error(`generated schema is invalid: ${problems.map((p) => p.message).join('; ')}`);
    return { schema, errors: model.errors, documents: new Map() };
  }

  /** GET …/graphql/status: every shape or name the generator skipped, and why (null: none). */
  async status(caller: Caller | null, account: string, datasetName: string): Promise<{ errors: string[] | null }> {
    const { errors } = await this.built(await this.source(caller, account, datasetName));
    return { errors: errors.length > 0 ? errors : null };
  }

  /** Runs one GraphQL request. `method` GET allows queries only (GraphQL over HTTP). */
  async run(caller: Caller | null, account: string, datasetName: string, request: GraphqlRequest, method: 'GET' | 'POST'): Promise<GraphqlOutcome> {
    if (request.query.length > MAX_QUERY_LENGTH) throw new ValidationError(`query: longer than ${MAX_QUERY_LENGTH} characters.`);
    const source = await this.source(caller, account, datasetName);
    const { schema, documents } = await this.built(source);
    let document = documents.get(request.query);
    if (!document) {
      try {
        document = parse(request.query, { maxTokens: MAX_TOKENS });
      } catch (e) {
        if (e instanceof GraphQLError) return { kind: 'request-error', errors: [e.toJSON()] };
        throw e;
      }
      const invalid = validate(schema, document, specifiedRules);
      if (invalid.length > 0) return { kind: 'request-error', errors: invalid.map((e) => e.toJSON()) };
      // A client repeats its queries (with other variables): parse and validate them once.
      if (request.query.length <= MAX_CACHED_QUERY_LENGTH) {
        if (documents.size >= MAX_CACHED_DOCUMENTS) documents.delete(documents.keys().next().value!);
        documents.set(request.query, document);
      }
    }
    const operation = getOperationAST(document, request.operationName ?? undefined);
    if (!operation) {
      const message = request.operationName ? `The document has no operation named "${request.operationName}".` : 'The document has several operations; say which to run with operationName.';
      return { kind: 'request-error', errors: [{ message }] };
    }
    if (method === 'GET' && operation.operation !== 'query') return { kind: 'request-error', errors: [{ message: 'GET runs queries only; send other operations by POST.' }] };
    const fragments = new Map<string, FragmentDefinitionNode>();
    for (const d of document.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d);
    const { depth, cost } = measure(schema, operation, fragments, request.variables ?? {});
    if (depth > MAX_DEPTH) return { kind: 'request-error', errors: [{ message: `The query is ${depth} fields deep, more than the ${MAX_DEPTH} allowed; ask for fewer nested levels.` }] };
    if (cost > MAX_COST) {
      return {
        kind: 'request-error',
        errors: [{ message: `The query may produce about ${cost} values, more than the ${MAX_COST} allowed; ask for fewer nodes (first) or fewer nested lists.` }],
      };
    }
    const loader = new LevelLoader(source.run);
    const context: ExecutionContext = { loader, languages: new Map() };
    const result = await execute({ schema, document, variableValues: request.variables ?? undefined, operationName: request.operationName ?? undefined, contextValue: context });
    // Our resolvers' own failures (a bad argument, a SPARQL timeout, the endpoint down) are the
    // request's: they get their own status, never a 200 with an internal message in it.
    for (const error of result.errors ?? []) if (error.originalError && !(error.originalError instanceof GraphQLError)) throw error.originalError;
    if (!('data' in result) || result.data === undefined) return { kind: 'request-error', errors: (result.errors ?? []).map((e) => e.toJSON()) };
    const extensions = { sparqlQueries: loader.queries, service: source.service, outOfSync: source.outOfSync };
    return { kind: 'response', body: { ...(result.errors ? { errors: result.errors.map((e) => e.toJSON()) } : {}), data: result.data, extensions } };
  }
}
