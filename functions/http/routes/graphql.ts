import { z } from 'zod';
import { ValidationError } from '../../domain/shared/errors.js';
import type { GraphqlRequest } from '../../domain/graphql/graphql-service.js';
import type { Operations, OperationContext } from '../api.js';
import { errorResponse, jsonResponse } from '../errors.js';
import { parseJsonBody, singleQueryParam } from '../request.js';
import type { HttpResponse } from '../types.js';
import { checkQueryParams } from '../query-params.js';

/**
 * GraphQL over HTTP (https://graphql.github.io/graphql-over-http/): GET with `query`,
 * `operationName` and `variables` (JSON) as query parameters, queries only; POST with a JSON body
 * `{query, variables?, operationName?}`. The answer is `application/graphql-response+json` when
 * the client accepts it at least as much as `application/json`, else `application/json`. Requests
 * GraphQL refuses (syntax, validation, depth or cost) are 400 with `{errors}`; failures of the
 * SPARQL behind them keep SPARQL's statuses (timeout 504, service unavailable 503). Every error
 * body also has `message`, as the platform's other routes.
 */

export const Body = z.object({
  query: z.string('is required: the GraphQL document'),
  variables: z.record(z.string(), z.unknown()).nullish(),
  operationName: z.string().nullish(),
  extensions: z.record(z.string(), z.unknown()).nullish(),
});

const GRAPHQL_RESPONSE = 'application/graphql-response+json';

/** q of the best Accept entry matching each of our two media types. */
function responseType(accept: string | undefined): string {
  if (!accept) return 'application/json';
  let graphqlQ = 0;
  let jsonQ = 0;
  for (const part of accept.split(',')) {
    const [type, ...params] = part.split(';').map((s) => s.trim().toLowerCase());
    const qParam = params.find((p) => p.startsWith('q='));
    const q = qParam ? Number(qParam.slice(2)) || 0 : 1;
    if (type === GRAPHQL_RESPONSE) graphqlQ = Math.max(graphqlQ, q);
    if (type === 'application/json' || type === '*/*' || type === 'application/*') jsonQ = Math.max(jsonQ, q);
  }
  return graphqlQ > 0 && graphqlQ >= jsonQ ? GRAPHQL_RESPONSE : 'application/json';
}

function readGet(ctx: OperationContext): GraphqlRequest {
  const query = singleQueryParam(ctx.req, 'query');
  if (!query) throw new ValidationError('query: give the GraphQL document as the "query" parameter.');
  const raw = singleQueryParam(ctx.req, 'variables');
  let variables: Record<string, unknown> | null = null;
  if (raw) {
    try {
      variables = JSON.parse(raw) as Record<string, unknown>;
    } catch {
      throw new ValidationError('variables: give the variables as a JSON object.');
    }
    if (typeof variables !== 'object' || variables === null || Array.isArray(variables)) throw new ValidationError('variables: give the variables as a JSON object.');
  }
  return { query, variables, operationName: singleQueryParam(ctx.req, 'operationName') };
}

const withType = (res: HttpResponse, type: string): HttpResponse => ({ ...res, headers: { ...res.headers, 'content-type': `${type}; charset=utf-8`, vary: 'Accept' } });

export const graphqlOperations: Operations = checkQueryParams({
  async graphql(ctx) {
    const type = responseType(ctx.req.headers.accept);
    try {
      const request = ctx.req.method === 'GET' ? readGet(ctx) : parseJsonBody(ctx.req, Body);
      const outcome = await ctx.services.graphql.run(ctx.caller, ctx.params.account!, ctx.params.dataset!, request, ctx.req.method === 'GET' ? 'GET' : 'POST');
      if (outcome.kind === 'request-error') return withType(jsonResponse(400, { message: outcome.errors[0]?.message ?? 'The GraphQL request is not valid.', errors: outcome.errors }), type);
      return withType(jsonResponse(200, outcome.body), type);
    } catch (error) {
      // The platform's error mapping, with the message also as a GraphQL error.
      const res = errorResponse(error, ctx.services.logger);
      const body = JSON.parse(String(res.body)) as { message: string };
      return withType({ ...res, body: JSON.stringify({ ...body, errors: [{ message: body.message }] }) }, type);
    }
  },

  async graphqlStatus(ctx) {
    return jsonResponse(200, await ctx.services.graphql.status(ctx.caller, ctx.params.account!, ctx.params.dataset!));
  },
}, {}, ['graphql']);
