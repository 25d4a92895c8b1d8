import { z } from 'zod';
import { MAX_STATEMENTS_PAGE, MAX_TERMS, TERM_POSITIONS } from '../../../domain/data/statements.js';
import type { Operations } from '../../api.js';
import { jsonResponse } from '../../errors.js';
import { allowQueryParams } from '../../query-params.js';
import { singleQueryParam, validate } from '../../request.js';

const count = (name: string, min: number, max: number) =>
  z
    .string()
    .regex(/^\d{1,9}$/, `${name}: give a whole number`)
    .transform(Number)
    .refine((n) => n >= min && n <= max, `${name}: give ${min} to ${max}`);

const filterFields = { subject: z.string().max(4096).optional(), predicate: z.string().max(4096).optional(), object: z.string().max(4096).optional(), graph: z.string().max(4096).optional() };

/** `GET …/statements` query: the client sends `limit=50` and the filters; `offset` pages (the Link header carries it). */
export const StatementsQuery = z.object({ ...filterFields, limit: count('limit', 1, MAX_STATEMENTS_PAGE).optional(), offset: count('offset', 0, 100_000_000).optional() });

/** `GET …/terms` query (TriplyDB's autocomplete). */
export const TermsQuery = z.object({
  ...filterFields,
  q: z.string().max(1000).optional(),
  pos: z.enum(TERM_POSITIONS, `pos: one of ${TERM_POSITIONS.join(', ')}`).optional(),
  limit: count('limit', 1, MAX_TERMS).optional(),
  termType: z.enum(['NamedNode', 'Literal'], 'termType: NamedNode or Literal').optional(),
  languageTag: z.string().max(100).optional(),
  dataType: z.string().max(4096).optional(),
});

function queryObject(req: Parameters<typeof singleQueryParam>[0], names: string[]): Record<string, string> {
  allowQueryParams(req, names);
  const out: Record<string, string> = {};
  for (const name of names) {
    const value = singleQueryParam(req, name);
    if (value !== null) out[name] = value;
  }
  return out;
}

export const statementOperations: Operations = {
  /** `NtriplyStatement[]` pages: `[[subject, predicate, object, graph]]` as RDF/JS-like terms; Link rel="next" while more exist. */
  async getStatements(ctx) {
    const query = validate(StatementsQuery, queryObject(ctx.req, Object.keys(StatementsQuery.shape)));
    const limit = query.limit ?? 50;
    const offset = query.offset ?? 0;
    const { limit: _l, offset: _o, ...filter } = query;
    const { items, more } = await ctx.services.statements.statements(ctx.caller, ctx.params.account!, ctx.params.dataset!, filter, offset, limit);
    const headers: Record<string, string> = {};
    if (more) {
      const next = new URLSearchParams(ctx.req.query);
      next.set('offset', String(offset + limit));
      next.set('limit', String(limit));
      headers.link = `<${ctx.apiUrl}${ctx.req.path}?${next.toString()}>; rel="next"`;
    }
    return jsonResponse(200, items, headers);
  },

  /** Terms (their values) containing `q`, those starting with it first. */
  async getTerms(ctx) {
    const query = validate(TermsQuery, queryObject(ctx.req, Object.keys(TermsQuery.shape)));
    const terms = await ctx.services.statements.terms(ctx.caller, ctx.params.account!, ctx.params.dataset!, { ...query, q: query.q ?? '', limit: query.limit ?? 20 });
    return jsonResponse(200, terms);
  },
};
