/**
 * Our OpenAPI 3.1 document, generated (never written by hand) from the route table (every route:
 * its method, path parameters and family), the zod schemas the routes check their JSON bodies
 * with, and the response schemas of our views (route-docs.ts). A route without docs still appears,
 * with a generic answer. Errors are `{ "message" }` JSON, text/plain on the SPARQL protocol routes.
 */
import { z } from 'zod';
import { ROUTES, type RouteSpec } from '../route-table.js';
import { OPERATION_DOCS, SCHEMA_MODULES, type AnswerDoc, type OperationDoc, type SchemaModule } from './route-docs.js';
import { CSRF_HEADER, SESSION_COOKIE } from '../../domain/accounts/auth-service.js';
import { ErrorView } from './response-schemas.js';

type Json = Record<string, unknown>;

/** The zod schema `[module, export]` names, or undefined when that module does not export it (yet). */
export function bodySchemaOf(ref: readonly [SchemaModule, string]): z.ZodType | undefined {
  const value = (SCHEMA_MODULES[ref[0]] as Record<string, unknown>)[ref[1]];
  return value instanceof z.ZodType ? value : undefined;
}

/** `#/$defs/<id>` references (z.toJSONSchema's named parts) point at `#/components/schemas/<id>` instead. */
function toComponentRefs(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(toComponentRefs);
  if (!value || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [k, k === '$ref' && typeof v === 'string' ? v.replace(/^#\/\$defs\//, '#/components/schemas/') : toComponentRefs(v)]),
  );
}

/**
 * JSON Schema 2020-12 of a zod schema (zod 4's z.toJSONSchema); the named views in it
 * (`.meta({ id })`) go to the components, referenced wherever they are used.
 */
function schemaFor(schema: z.ZodType, io: 'input' | 'output', components: Json): Json {
  const out = toComponentRefs(z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'any' })) as Json;
  const { $schema: _schema, $defs, ...rest } = out as Json & { $defs?: Record<string, Json> };
  for (const [id, def] of Object.entries($defs ?? {})) {
    const { id: _id, ...body } = def;
    components[id] ??= body;
  }
  return rest;
}

const pathParams = (path: string): string[] => [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);

function answer(doc: AnswerDoc, components: Json): Json {
  const content: Json = {};
  if (doc.schema) content['application/json'] = { schema: schemaFor(doc.schema, 'output', components) };
  for (const media of doc.media ?? []) content[media] ??= {};
  return Object.keys(content).length ? { description: doc.description, content } : { description: doc.description };
}

function errorAnswers(route: RouteSpec, doc: OperationDoc): Json {
  const json = { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } };
  const plain = { 'text/plain': { schema: { type: 'string' } } };
  const content = route.plainErrors ? plain : doc.plainErrorsToo ? { ...json, ...plain } : json;
  return {
    '4XX': { description: 'The request cannot be served as sent: the message says what to fix (401 sign in, 403 not allowed, 404 not found or not visible).', content },
    '5XX': { description: 'The platform failed.', content },
  };
}

const GENERIC: OperationDoc = { summary: '', answers: { '2XX': { description: 'OK', media: ['*/*'] } } };

function operationObject(route: RouteSpec, operationId: string, components: Json): Json {
  const doc = OPERATION_DOCS[route.operation] ?? { ...GENERIC, summary: route.operation };
  const parameters: Json[] = pathParams(route.path).map((name) => ({ name, in: 'path', required: true, schema: { type: 'string' } }));
  if (route.method === 'GET' || route.method === 'HEAD') {
    for (const name of doc.query ?? []) parameters.push({ name, in: 'query', required: false, schema: { type: 'string' } });
  }
  const op: Json = {
    operationId,
    summary: doc.summary,
    tags: [route.family],
    'x-family': route.family,
    'x-operation': route.operation,
    parameters,
    responses: { ...Object.fromEntries(Object.entries(doc.answers).map(([status, a]) => [status, answer(a, components)])), ...errorAnswers(route, doc) },
  };
  const bodied = route.method === 'POST' || route.method === 'PUT' || route.method === 'PATCH';
  if (bodied) {
    const content: Json = {};
    const schema = doc.body ? bodySchemaOf(doc.body) : undefined;
    if (schema) content['application/json'] = { schema: schemaFor(schema, 'input', components) };
    for (const media of doc.bodyMedia ?? []) content[media] ??= {};
    if (!Object.keys(content).length) content['application/json'] = {};
    op.requestBody = { required: !!schema && !route.stream, content };
  }
  if (doc.anyQuery) op['x-any-query-parameters'] = doc.anyQuery;
  if (route.stream) op['x-streamed-body'] = true;
  if (route.host) op['x-aws-host'] = route.host;
  return op;
}

/** The document for the given routes (all of them by default); `apiUrl` becomes its server. */
export function buildOpenApiDocument(options: { apiUrl: string; version: string; routes?: readonly RouteSpec[] }): Json {
  const components: Json = {};
  schemaFor(ErrorView, 'output', components);
  const paths: Record<string, Json> = {};
  const used = new Map<string, number>();
  for (const route of options.routes ?? ROUTES) {
    const n = used.get(route.operation) ?? 0;
    used.set(route.operation, n + 1);
    const operationId = n === 0 ? route.operation : `${route.operation}_${n + 1}`;
    (paths[route.path] ??= {})[route.method.toLowerCase()] = operationObject(route, operationId, components);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Linked Data Platform API',
      version: options.version,
      description: 'Generated from the route table (functions/http/route-table.ts) and the routes\' request schemas. Compatible with the TriplyDB API.',
    },
    servers: [{ url: options.apiUrl }],
    security: [{}, { token: [] }, { session: [] }],
    paths,
    components: {
      schemas: components,
      securitySchemes: {
        token: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'An API token (POST /accounts/{account}/tokens).' },
        session: { type: 'apiKey', in: 'cookie', name: SESSION_COOKIE, description: `The session of POST /login; changes also send the CSRF token it answered, in the ${CSRF_HEADER} header.` },
      },
    },
  };
}
