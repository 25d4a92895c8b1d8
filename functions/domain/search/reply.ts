/**
 * Replies in Elasticsearch's shape (spec: "Search reply"): hits under `hits.hits`, best first,
 * each with `_id` (the subject IRI), `_score` and the properties. As in TriplyDB's reply format
 * the properties (IRI keys with `.` written as a space, values always arrays) stand on the hit
 * itself, and also under `_source` as Elasticsearch clients read them; `_source` filtering applies
 * to both.
 */
import type { FieldValue, SearchResult } from '../../ports/search-index.js';
import type { SourceFilter } from './query-dsl.js';

export const SHARDS = { total: 1, successful: 1, skipped: 0, failed: 0 };

/** A `*` pattern (Elasticsearch's simple match) as a test. */
export function patternTest(pattern: string): (name: string) => boolean {
  if (!pattern.includes('*')) return (name) => name === pattern;
  const re = new RegExp(`^${pattern.split('*').map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`);
  return (name) => re.test(name);
}

export function filterSource(source: Record<string, FieldValue[]>, filter: SourceFilter): Record<string, FieldValue[]> | undefined {
  if (!filter.enabled) return undefined;
  if (filter.includes.length === 0 && filter.excludes.length === 0) return source;
  const includes = filter.includes.map(patternTest);
  const excludes = filter.excludes.map(patternTest);
  const out: Record<string, FieldValue[]> = {};
  for (const [k, v] of Object.entries(source)) {
    if (includes.length > 0 && !includes.some((t) => t(k))) continue;
    if (excludes.some((t) => t(k))) continue;
    out[k] = v;
  }
  return out;
}

export function searchReply(result: SearchResult, filter: SourceFilter, tookMs: number): Record<string, unknown> {
  return {
    took: Math.max(0, Math.round(tookMs)),
    timed_out: false,
    _shards: SHARDS,
    hits: {
      total: { value: result.total, relation: 'eq' },
      max_score: result.maxScore,
      hits: result.hits.map((hit) => {
        const source = filterSource(hit._source, filter);
        return {
          _index: 'index',
          _id: hit._id,
          _score: hit._score,
          ...(source ?? {}),
          ...(source ? { _source: source } : {}),
          ...(hit.highlight ? { highlight: hit.highlight } : {}),
          ...(hit.sort ? { sort: hit.sort } : {}),
        };
      }),
    },
    ...(result.aggregations ? { aggregations: result.aggregations } : {}),
  };
}
