/**
 * The Elasticsearch Query DSL subset the search services answer, validated and compiled to the
 * SearchIndexes port's request (ports/search-index.ts). Anything outside it (a clause, a parameter
 * or a request field) is a 400 naming it, never ignored.
 */
import type { FieldValue, Fuzziness, HighlightRequest, QueryNode, SearchRequest, SortKey, TermsAggregation, TextField } from '../../ports/search-index.js';
import { ValidationError } from '../shared/errors.js';
import { parseQueryString } from './query-string.js';

/** Elasticsearch's index.max_result_window: from + size beyond it is refused. */
export const MAX_RESULT_WINDOW = 10_000;
const MAX_CLAUSES = 1024;
const MAX_DEPTH = 20;

type Obj = Record<string, unknown>;
const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

const fail = (where: string, what: string): never => {
  throw new ValidationError(`${where}: ${what}`);
};

function keys(value: Obj, allowed: string[], where: string): void {
  for (const k of Object.keys(value)) if (!allowed.includes(k)) fail(`${where}.${k}`, `not supported here; supported: ${allowed.join(', ') || 'none'}.`);
}

function single(value: unknown, where: string): [string, unknown] {
  if (!isObject(value)) return fail(where, 'must be an object.');
  const entries = Object.entries(value);
  if (entries.length !== 1) fail(where, 'must hold exactly one field.');
  return entries[0]!;
}

const str = (v: unknown, where: string): string => (typeof v === 'string' ? v : fail(where, 'must be a string.'));
const num = (v: unknown, where: string): number => {
  const n = typeof v === 'string' && v.trim() !== '' ? Number(v) : v;
  return typeof n === 'number' && Number.isFinite(n) ? n : fail(where, 'must be a number.');
};
const bool = (v: unknown, where: string): boolean => (typeof v === 'boolean' ? v : v === 'true' ? true : v === 'false' ? false : fail(where, 'must be true or false.'));
const scalar = (v: unknown, where: string): FieldValue =>
  typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' ? v : fail(where, 'must be a string, number or boolean.');

function fuzzinessOf(v: unknown, where: string): Fuzziness {
  if (v === undefined) return 0;
  if (typeof v === 'string' && v.toUpperCase().startsWith('AUTO')) return 'AUTO';
  const n = num(v, where);
  if (n !== 0 && n !== 1 && n !== 2) fail(where, 'must be 0, 1, 2 or "AUTO".');
  return n as Fuzziness;
}

function msm(v: unknown, where: string): number | string | undefined {
  if (v === undefined) return undefined;
  if (typeof v === 'number' && Number.isInteger(v)) return v;
  if (typeof v === 'string' && /^-?\d+%?$/.test(v.trim())) return v.trim();
  return fail(where, 'must be an integer or a percentage such as "75%".');
}

/** `field^2` → {field, boost}; `*` stays a pattern. */
export function textFields(v: unknown, where: string): TextField[] {
  const list = v === undefined ? ['*'] : Array.isArray(v) ? v : fail(where, 'must be an array of field names.');
  if (list.length === 0) fail(where, 'must name at least one field.');
  return list.map((f, i) => {
    const s = str(f, `${where}[${i}]`);
    const m = /^(.*)\^(\d+(\.\d+)?)$/.exec(s);
    return m ? { field: m[1]!, boost: Number(m[2]) } : { field: s, boost: 1 };
  });
}

class Compiler {
  private clauses = 0;

  node(value: unknown, where: string, depth = 0): QueryNode {
    if (++this.clauses > MAX_CLAUSES) fail(where, `the query has more than ${MAX_CLAUSES} clauses.`);
    if (depth > MAX_DEPTH) fail(where, `queries nest at most ${MAX_DEPTH} deep.`);
    const [kind, body] = single(value, where);
    const at = `${where}.${kind}`;
    switch (kind) {
      case 'match_all':
        return this.leaf(body, at, [], () => ({ kind: 'match_all', boost: 1 }));
      case 'match_none':
        return this.leaf(body, at, [], () => ({ kind: 'match_none' }));
      case 'match':
      case 'match_phrase':
      case 'match_phrase_prefix':
      case 'match_bool_prefix':
        return this.match(kind, body, at);
      case 'multi_match':
        return this.multiMatch(body, at);
      case 'simple_query_string':
      case 'query_string':
        return this.queryString(kind, body, at);
      case 'term':
      case 'prefix':
      case 'wildcard':
      case 'fuzzy':
        return this.fieldLevel(kind, body, at);
      case 'terms':
        return this.terms(body, at);
      case 'range':
        return this.range(body, at);
      case 'exists':
        return this.leaf(body, at, ['field'], (o) => ({ kind: 'exists', field: str(o.field, `${at}.field`), boost: 1 }));
      case 'ids':
        return this.leaf(body, at, ['values'], (o) => ({
          kind: 'ids',
          values: (Array.isArray(o.values) ? o.values : fail(`${at}.values`, 'required; an array of document ids.')).map((v, i) => str(v, `${at}.values[${i}]`)),
          boost: 1,
        }));
      case 'bool':
        return this.bool(body, at, depth);
      default:
        return fail(at, `the query clause "${kind}" is not supported; supported: match, match_phrase, match_phrase_prefix, match_bool_prefix, multi_match, simple_query_string, query_string, term, terms, range, prefix, wildcard, fuzzy, exists, ids, bool, match_all, match_none.`);
    }
  }

  /**
   * An object clause with `boost` and `_name` besides `allowed`. Parameters that change nothing
   * here are accepted only with the value that means what this engine does: `analyzer` standard,
   * `zero_terms_query` none, `lenient` (always lenient), `allow_leading_wildcard` true.
   */
  private leaf(body: unknown, at: string, allowed: string[], make: (o: Obj) => QueryNode): QueryNode {
    if (!isObject(body)) return fail(at, 'must be an object.');
    keys(body, [...allowed, 'boost', '_name'], at);
    if (body.analyzer !== undefined && body.analyzer !== 'standard') fail(`${at}.analyzer`, 'only "standard" (lower-cased words split at spaces and punctuation) is offered.');
    if (body.zero_terms_query !== undefined && body.zero_terms_query !== 'none') fail(`${at}.zero_terms_query`, 'only "none" is offered (a query without words matches nothing).');
    if (body.allow_leading_wildcard !== undefined && body.allow_leading_wildcard !== true) fail(`${at}.allow_leading_wildcard`, 'leading wildcards are always allowed here; leave it out.');
    if (body.lenient !== undefined) bool(body.lenient, `${at}.lenient`);
    const node = make(body);
    if (body.boost !== undefined && 'boost' in node) node.boost = num(body.boost, `${at}.boost`);
    return node;
  }

  private match(kind: string, body: unknown, at: string): QueryNode {
    const [field, raw] = single(body, at);
    const fat = `${at}.${field}`;
    const o: Obj = isObject(raw) ? raw : { query: raw };
    const fields = [{ field, boost: 1 }];
    if (kind === 'match') {
      return this.leaf(o, fat, ['query', 'operator', 'fuzziness', 'minimum_should_match', 'analyzer', 'lenient', 'zero_terms_query'], (b) => ({
        kind: 'text',
        fields,
        query: String(scalar(b.query, `${fat}.query`)),
        operator: operator(b.operator, `${fat}.operator`),
        fuzziness: fuzzinessOf(b.fuzziness, `${fat}.fuzziness`),
        prefix: false,
        minimumShouldMatch: msm(b.minimum_should_match, `${fat}.minimum_should_match`),
        boost: 1,
      }));
    }
    if (kind === 'match_bool_prefix') {
      return this.leaf(o, fat, ['query', 'operator', 'minimum_should_match', 'analyzer'], (b) => ({
        kind: 'text', fields, query: str(b.query, `${fat}.query`), operator: operator(b.operator, `${fat}.operator`), fuzziness: 0, prefix: true,
        minimumShouldMatch: msm(b.minimum_should_match, `${fat}.minimum_should_match`), boost: 1,
      }));
    }
    return this.leaf(o, fat, ['query', 'slop', 'analyzer', 'zero_terms_query'], (b) => ({
      kind: 'phrase', fields, query: str(b.query, `${fat}.query`), slop: b.slop === undefined ? 0 : num(b.slop, `${fat}.slop`), prefix: kind === 'match_phrase_prefix', boost: 1,
    }));
  }

  private multiMatch(body: unknown, at: string): QueryNode {
    return this.leaf(body, at, ['query', 'fields', 'type', 'operator', 'fuzziness', 'minimum_should_match', 'slop', 'analyzer', 'lenient', 'zero_terms_query'], (b) => {
      const fields = textFields(b.fields, `${at}.fields`);
      const query = String(scalar(b.query, `${at}.query`));
      const type = b.type === undefined ? 'best_fields' : str(b.type, `${at}.type`);
      if (type === 'phrase' || type === 'phrase_prefix') {
        return { kind: 'phrase', fields, query, slop: b.slop === undefined ? 0 : num(b.slop, `${at}.slop`), prefix: type === 'phrase_prefix', boost: 1 };
      }
      if (!['best_fields', 'most_fields', 'cross_fields', 'bool_prefix'].includes(type)) fail(`${at}.type`, `"${type}" is not supported; use best_fields, most_fields, cross_fields, phrase, phrase_prefix or bool_prefix.`);
      return {
        kind: 'text', fields, query, operator: operator(b.operator, `${at}.operator`), fuzziness: fuzzinessOf(b.fuzziness, `${at}.fuzziness`), prefix: type === 'bool_prefix',
        minimumShouldMatch: msm(b.minimum_should_match, `${at}.minimum_should_match`), boost: 1,
      };
    });
  }

  private queryString(kind: 'simple_query_string' | 'query_string', body: unknown, at: string): QueryNode {
    const allowed = ['query', 'fields', 'default_operator', 'analyze_wildcard', 'lenient', 'analyzer'];
    if (kind === 'query_string') allowed.push('default_field', 'allow_leading_wildcard', 'phrase_slop', 'fuzziness');
    else allowed.push('auto_generate_synonyms_phrase_query');
    return this.leaf(body, at, allowed, (b) => {
      const fields = b.default_field !== undefined ? textFields([b.default_field], `${at}.default_field`) : textFields(b.fields, `${at}.fields`);
      const query = str(b.query, `${at}.query`);
      const defaultOperator = operator(b.default_operator, `${at}.default_operator`);
      try {
        const phraseSlop = b.phrase_slop === undefined ? 0 : num(b.phrase_slop, `${at}.phrase_slop`);
        return parseQueryString(query, { syntax: kind === 'query_string' ? 'lucene' : 'simple', fields, defaultOperator, fuzziness: fuzzinessOf(b.fuzziness, `${at}.fuzziness`), phraseSlop });
      } catch (e) {
        if (kind === 'simple_query_string' || !(e instanceof SyntaxError)) throw e;
        return fail(`${at}.query`, e.message);
      }
    });
  }

  private fieldLevel(kind: 'term' | 'prefix' | 'wildcard' | 'fuzzy', body: unknown, at: string): QueryNode {
    const [field, raw] = single(body, at);
    const fat = `${at}.${field}`;
    const o: Obj = isObject(raw) ? raw : { value: raw };
    if (kind === 'term') return this.leaf(o, fat, ['value', 'case_insensitive'], (b) => ({ kind: 'term', field, values: [scalar(b.value, `${fat}.value`)], caseInsensitive: b.case_insensitive === undefined ? false : bool(b.case_insensitive, `${fat}.case_insensitive`), boost: 1 }));
    if (kind === 'fuzzy') return this.leaf(o, fat, ['value', 'fuzziness'], (b) => ({ kind: 'fuzzy', field, value: String(scalar(b.value, `${fat}.value`)), fuzziness: b.fuzziness === undefined ? 'AUTO' : fuzzinessOf(b.fuzziness, `${fat}.fuzziness`), boost: 1 }));
    const valueKey = kind === 'wildcard' && o.wildcard !== undefined ? 'wildcard' : 'value';
    return this.leaf(o, fat, ['value', 'case_insensitive', 'rewrite', ...(kind === 'wildcard' ? ['wildcard'] : [])], (b) => {
      const value = str(b[valueKey], `${fat}.${valueKey}`);
      const caseInsensitive = b.case_insensitive === undefined ? false : bool(b.case_insensitive, `${fat}.case_insensitive`);
      return kind === 'prefix' ? { kind: 'prefix', field, value, caseInsensitive, boost: 1 } : { kind: 'wildcard', field, pattern: value, caseInsensitive, boost: 1 };
    });
  }

  private terms(body: unknown, at: string): QueryNode {
    if (!isObject(body)) return fail(at, 'must be an object.');
    const fieldsGiven = Object.keys(body).filter((k) => k !== 'boost' && k !== '_name');
    if (fieldsGiven.length !== 1) fail(at, 'must name exactly one field with an array of values.');
    const field = fieldsGiven[0]!;
    const values = body[field];
    if (!Array.isArray(values)) return fail(`${at}.${field}`, 'must be an array of values (terms lookup is not supported).');
    if (values.length > 65_536) fail(`${at}.${field}`, 'at most 65536 values.');
    return { kind: 'term', field, values: values.map((v, i) => scalar(v, `${at}.${field}[${i}]`)), caseInsensitive: false, boost: body.boost === undefined ? 1 : num(body.boost, `${at}.boost`) };
  }

  private range(body: unknown, at: string): QueryNode {
    const [field, raw] = single(body, at);
    const fat = `${at}.${field}`;
    return this.leaf(raw, fat, ['gt', 'gte', 'lt', 'lte', 'format', 'time_zone', 'relation'], (b) => {
      if (b.format !== undefined || b.time_zone !== undefined) fail(`${fat}.${b.format !== undefined ? 'format' : 'time_zone'}`, 'not supported; give dates as ISO 8601 (a date without a zone is UTC).');
      const node: QueryNode = { kind: 'range', field, boost: 1 };
      for (const bound of ['gt', 'gte', 'lt', 'lte'] as const) if (b[bound] !== undefined) node[bound] = scalar(b[bound], `${fat}.${bound}`);
      if (b.gt === undefined && b.gte === undefined && b.lt === undefined && b.lte === undefined) fail(fat, 'give at least one of gt, gte, lt, lte.');
      return node;
    });
  }

  private bool(body: unknown, at: string, depth: number): QueryNode {
    return this.leaf(body, at, ['must', 'should', 'must_not', 'filter', 'minimum_should_match'], (b) => {
      const list = (name: string): QueryNode[] => {
        const v = b[name];
        if (v === undefined) return [];
        return (Array.isArray(v) ? v : [v]).map((q, i) => this.node(q, Array.isArray(v) ? `${at}.${name}[${i}]` : `${at}.${name}`, depth + 1));
      };
      return { kind: 'bool', must: list('must'), should: list('should'), mustNot: list('must_not'), filter: list('filter'), minimumShouldMatch: msm(b.minimum_should_match, `${at}.minimum_should_match`), boost: 1 };
    });
  }
}

function operator(v: unknown, where: string): 'or' | 'and' {
  if (v === undefined) return 'or';
  const s = str(v, where).toLowerCase();
  return s === 'and' || s === 'or' ? s : fail(where, 'must be "or" or "and".');
}

export function compileQuery(value: unknown, where = 'query'): QueryNode {
  if (value === undefined) return { kind: 'match_all', boost: 1 };
  return new Compiler().node(value, where);
}

const SEARCH_KEYS = ['query', 'from', 'size', 'sort', '_source', 'highlight', 'aggs', 'aggregations', 'track_total_hits', 'min_score', 'timeout'];

function sortOf(v: unknown): SortKey[] {
  if (v === undefined) return [];
  const list = Array.isArray(v) ? v : [v];
  return list.map((item, i) => {
    const where = `sort[${i}]`;
    if (typeof item === 'string') return { field: item, order: item === '_score' ? 'desc' : 'asc' };
    const [field, spec] = single(item, where);
    if (typeof spec === 'string') return { field, order: sortOrder(spec, `${where}.${field}`) };
    if (!isObject(spec)) return fail(`${where}.${field}`, 'must be "asc", "desc" or {"order": ...}.');
    keys(spec, ['order', 'unmapped_type'], `${where}.${field}`);
    return { field, order: spec.order === undefined ? (field === '_score' ? 'desc' : 'asc') : sortOrder(spec.order, `${where}.${field}.order`) };
  });
}

const sortOrder = (v: unknown, where: string): 'asc' | 'desc' => (v === 'asc' || v === 'desc' ? v : fail(where, 'must be "asc" or "desc".'));

function highlightOf(v: unknown): HighlightRequest | undefined {
  if (v === undefined) return undefined;
  if (!isObject(v)) return fail('highlight', 'must be an object with fields.');
  keys(v, ['fields', 'pre_tags', 'post_tags', 'number_of_fragments', 'require_field_match'], 'highlight');
  let fields: string[];
  if (Array.isArray(v.fields)) fields = v.fields.map((f, i) => (isObject(f) ? single(f, `highlight.fields[${i}]`)[0] : str(f, `highlight.fields[${i}]`)));
  else if (isObject(v.fields)) {
    fields = Object.keys(v.fields);
    for (const [f, o] of Object.entries(v.fields)) if (!isObject(o) || Object.keys(o).length > 0) fail(`highlight.fields.${f}`, 'per-field options are not supported; give {} (the highlight options apply to every field).');
  }
  else return fail('highlight.fields', 'required; an object of field → {} (or "*": {}).');
  const tag = (t: unknown, where: string, d: string) => (t === undefined ? d : Array.isArray(t) && t.length > 0 ? str(t[0], `${where}[0]`) : fail(where, 'must be an array of strings.'));
  if (v.require_field_match !== undefined && v.require_field_match !== false) fail('highlight.require_field_match', 'only false is offered: the words the query matched are highlighted in every field asked for.');
  return {
    fields,
    preTag: tag(v.pre_tags, 'highlight.pre_tags', '<em>'),
    postTag: tag(v.post_tags, 'highlight.post_tags', '</em>'),
    numberOfFragments: v.number_of_fragments === undefined ? 5 : num(v.number_of_fragments, 'highlight.number_of_fragments'),
  };
}

function aggregationsOf(v: unknown, where: string): TermsAggregation[] {
  if (v === undefined) return [];
  if (!isObject(v)) return fail(where, 'must be an object of name → aggregation.');
  return Object.entries(v).map(([name, spec]) => {
    const at = `${where}.${name}`;
    const [type, body] = single(spec, at);
    if (type !== 'terms') fail(`${at}.${type}`, `the aggregation "${type}" is not supported; only terms aggregations are.`);
    if (!isObject(body)) return fail(`${at}.terms`, 'must be an object with field.');
    keys(body, ['field', 'size'], `${at}.terms`);
    const size = body.size === undefined ? 10 : num(body.size, `${at}.terms.size`);
    if (!Number.isInteger(size) || size < 1 || size > 10_000) fail(`${at}.terms.size`, 'must be an integer from 1 to 10000.');
    return { name, field: str(body.field, `${at}.terms.field`), size };
  });
}

/** A `_search` body (or null: an empty body) → the port's request. */
export function compileSearch(raw: unknown, defaults: { size?: number } = {}): SearchRequest {
  const body = raw === undefined || raw === null ? {} : isObject(raw) ? raw : fail('body', 'must be a JSON object (Elasticsearch Query DSL).');
  for (const k of Object.keys(body)) if (!SEARCH_KEYS.includes(k)) fail(k, `not supported in a search request; supported: ${SEARCH_KEYS.join(', ')}.`);
  const from = body.from === undefined ? 0 : num(body.from, 'from');
  const size = body.size === undefined ? (defaults.size ?? 10) : num(body.size, 'size');
  if (!Number.isInteger(from) || from < 0) fail('from', 'must be a whole number, 0 or more.');
  if (!Number.isInteger(size) || size < 0) fail('size', 'must be a whole number, 0 or more.');
  if (from + size > MAX_RESULT_WINDOW) fail('size', `from + size must be at most ${MAX_RESULT_WINDOW}.`);
  if (body.aggs !== undefined && body.aggregations !== undefined) fail('aggs', 'give aggs or aggregations, not both.');
  // Totals are always exact here: true, false or a number all mean that.
  if (body.track_total_hits !== undefined && typeof body.track_total_hits !== 'boolean' && !Number.isInteger(body.track_total_hits)) fail('track_total_hits', 'must be true, false or a whole number.');
  if (body.timeout !== undefined && (typeof body.timeout !== 'string' || !/^\d+(ms|s|m)$/.test(body.timeout))) fail('timeout', 'must be a time such as "10s" (searches here end within the request time anyway).');
  sourceFilter(body._source);
  return {
    body,
    query: compileQuery(body.query),
    from,
    size,
    sort: sortOf(body.sort),
    highlight: highlightOf(body.highlight),
    aggregations: aggregationsOf(body.aggs ?? body.aggregations, body.aggs !== undefined ? 'aggs' : 'aggregations'),
    minScore: body.min_score === undefined ? undefined : num(body.min_score, 'min_score'),
  };
}

/** `_source`: true/false, a pattern, patterns, or {includes, excludes}. */
export interface SourceFilter {
  enabled: boolean;
  includes: string[];
  excludes: string[];
}

export function sourceFilter(v: unknown): SourceFilter {
  const patterns = (x: unknown, where: string): string[] => (x === undefined ? [] : typeof x === 'string' ? [x] : Array.isArray(x) ? x.map((p, i) => str(p, `${where}[${i}]`)) : fail(where, 'must be a pattern or an array of patterns.'));
  if (v === undefined || v === true) return { enabled: true, includes: [], excludes: [] };
  if (v === false) return { enabled: false, includes: [], excludes: [] };
  if (typeof v === 'string' || Array.isArray(v)) return { enabled: true, includes: patterns(v, '_source'), excludes: [] };
  if (!isObject(v)) return fail('_source', 'must be true, false, a pattern, an array of patterns or {includes, excludes}.');
  keys(v, ['includes', 'excludes', 'include', 'exclude'], '_source');
  return { enabled: true, includes: patterns(v.includes ?? v.include, '_source.includes'), excludes: patterns(v.excludes ?? v.exclude, '_source.excludes') };
}

/** `_count`: only `query`. */
export function compileCount(raw: unknown): { body: Obj; query: QueryNode } {
  const body = raw === undefined || raw === null ? {} : isObject(raw) ? raw : fail('body', 'must be a JSON object with query.');
  keys(body, ['query'], 'body');
  return { body, query: compileQuery(body.query) };
}
