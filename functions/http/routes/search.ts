import { z } from 'zod';
import { TooLargeError, UnsupportedMediaTypeError, ValidationError } from '../../domain/shared/errors.js';
import type { SearchTarget } from '../../domain/search/search-service.js';
import type { OperationContext, Operations } from '../api.js';
import { jsonResponse } from '../errors.js';
import { MAX_JSON_BODY_BYTES, parseJsonBody, singleQueryParam } from '../request.js';
import { checkQueryParams } from '../query-params.js';

/** Text search services (issue 15): Elasticsearch's routes under …/services/{service}/. */

const target = (ctx: OperationContext): SearchTarget => ({ caller: ctx.caller, account: ctx.params.account!, dataset: ctx.params.dataset!, service: ctx.params.service! });

/** Any JSON value (the domain validates the Query DSL and names what is wrong). */
const AnyJson = z.unknown();

const whole = (name: string, raw: string | null): number | undefined => {
  if (raw === null) return undefined;
  if (!/^\d{1,5}$/.test(raw)) throw new ValidationError(`${name}: must be a whole number, 0 or more.`);
  return Number(raw);
};

/** An NDJSON body (`_msearch`): application/x-ndjson or JSON, as Elasticsearch clients send it. */
function ndjsonBody(ctx: OperationContext): string {
  if (ctx.req.body.length > MAX_JSON_BODY_BYTES) throw new TooLargeError(`The body is larger than ${MAX_JSON_BODY_BYTES} bytes.`);
  const type = (ctx.req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  if (!['application/x-ndjson', 'application/json', 'application/vnd.elasticsearch+x-ndjson'].includes(type) && !type.endsWith('+json')) {
    throw new UnsupportedMediaTypeError(`Send _msearch as NDJSON with "Content-Type: application/x-ndjson" (got "${type || 'none'}").`);
  }
  return ctx.req.body.toString('utf8');
}

export const searchOperations: Operations = checkQueryParams({
  async simpleSearch(ctx) {
    const query = singleQueryParam(ctx.req, 'query');
    if (query === null) throw new ValidationError('query: required; the text to search for (?query=...).');
    for (const name of ctx.req.query.keys()) {
      if (!['query', 'from', 'size'].includes(name)) throw new ValidationError(`${name}: not a parameter of the simple search; use query, from and size (or POST a Query DSL body).`);
    }
    const paging = { from: whole('from', singleQueryParam(ctx.req, 'from')), size: whole('size', singleQueryParam(ctx.req, 'size')) };
    return jsonResponse(200, await ctx.services.search.simple(target(ctx), query, paging));
  },

  async dslSearch(ctx) {
    return jsonResponse(200, await ctx.services.search.search(target(ctx), parseJsonBody(ctx.req, AnyJson)));
  },

  async multiSearch(ctx) {
    return jsonResponse(200, await ctx.services.search.msearch(target(ctx), ndjsonBody(ctx)));
  },

  async countSearch(ctx) {
    return jsonResponse(200, await ctx.services.search.count(target(ctx), parseJsonBody(ctx.req, AnyJson)));
  },

  async termsEnum(ctx) {
    return jsonResponse(200, await ctx.services.search.termsEnum(target(ctx), parseJsonBody(ctx.req, AnyJson)));
  },

  async searchMappings(ctx) {
    return jsonResponse(200, await ctx.services.search.mappings(target(ctx)));
  },
}, { simpleSearch: ['query', 'from', 'size'] });
