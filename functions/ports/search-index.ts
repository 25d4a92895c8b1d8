/**
 * SearchIndexes port: the text-search indexes of `elasticSearch` services (issue 15). One index
 * per service snapshot, keyed by the domain (`search/<dataset>/<service>/<snapshot>`). Adapters:
 * the embedded engine (MiniSearch, its index saved as a blob so a restart or a cold function does
 * not re-index) and Amazon OpenSearch (the Query DSL body passed through unchanged).
 *
 * Requests arrive validated by the domain (domain/search/query-dsl.ts): `body` is the Elasticsearch
 * request as the client sent it (for engines that speak the DSL), `query` and the other fields
 * are the same request compiled (for engines that do not).
 */

export type FieldValue = string | number | boolean;

/** One document: a subject of the snapshot; field names are property IRIs with `.` written as a space. */
export interface SearchDocument {
  _id: string;
  fields: Record<string, FieldValue[]>;
}

/** Field types a mapping may give (Elasticsearch's names). */
export const FIELD_TYPES = ['text', 'keyword', 'date', 'long', 'integer', 'short', 'byte', 'double', 'float', 'half_float', 'scaled_float', 'unsigned_long', 'boolean'] as const;
export type FieldType = (typeof FIELD_TYPES)[number];
export type SearchMappings = Record<string, { type: FieldType }>;

/** How a service's index is configured (its create body's `config`, validated). */
export interface SearchServiceConfig {
  indexTemplates: { name: string; index_patterns: 'index'; composed_of?: string[] }[];
  componentTemplates: { name: string; template: { mappings?: { properties: SearchMappings }; settings?: Record<string, unknown> } }[];
}

/** Fuzziness of a term: an edit distance, or AUTO (0 for 1-2 characters, 1 for 3-5, 2 beyond). */
export type Fuzziness = 0 | 1 | 2 | 'AUTO';

/** `fields` of full-text clauses: field names, `*` for every text field; `^n` boosts already split off. */
export interface TextField {
  field: string;
  boost: number;
}

export type QueryNode =
  | { kind: 'match_all'; boost: number }
  | { kind: 'match_none' }
  /** Analysed text: match, multi_match (best_fields), the terms of (simple_)query_string. */
  | { kind: 'text'; fields: TextField[]; query: string; operator: 'or' | 'and'; fuzziness: Fuzziness; prefix: boolean; minimumShouldMatch?: number | string; boost: number }
  /** Words in order, at most `slop` positions apart. */
  | { kind: 'phrase'; fields: TextField[]; query: string; slop: number; prefix: boolean; boost: number }
  /** Exact values (term, terms): keyword equality, or a token of a text field. */
  | { kind: 'term'; field: string; values: FieldValue[]; caseInsensitive: boolean; boost: number }
  | { kind: 'range'; field: string; gt?: FieldValue; gte?: FieldValue; lt?: FieldValue; lte?: FieldValue; boost: number }
  | { kind: 'prefix'; field: string; value: string; caseInsensitive: boolean; boost: number }
  | { kind: 'wildcard'; field: string; pattern: string; caseInsensitive: boolean; boost: number }
  | { kind: 'fuzzy'; field: string; value: string; fuzziness: Fuzziness; boost: number }
  | { kind: 'exists'; field: string; boost: number }
  | { kind: 'ids'; values: string[]; boost: number }
  | { kind: 'bool'; must: QueryNode[]; should: QueryNode[]; mustNot: QueryNode[]; filter: QueryNode[]; minimumShouldMatch?: number | string; boost: number };

export interface SortKey {
  /** A field, `_score` or `_id`. */
  field: string;
  order: 'asc' | 'desc';
}

export interface HighlightRequest {
  /** Field names or patterns (`*`). */
  fields: string[];
  preTag: string;
  postTag: string;
  numberOfFragments: number;
}

export interface TermsAggregation {
  name: string;
  field: string;
  size: number;
}

export interface SearchRequest {
  /** The Elasticsearch request body as sent (validated). */
  body: Record<string, unknown>;
  query: QueryNode;
  from: number;
  size: number;
  sort: SortKey[];
  highlight?: HighlightRequest;
  aggregations: TermsAggregation[];
  minScore?: number;
}

export interface SearchHit {
  _id: string;
  _score: number | null;
  _source: Record<string, FieldValue[]>;
  highlight?: Record<string, string[]>;
  sort?: unknown[];
}

export interface TermsBuckets {
  doc_count_error_upper_bound: number;
  sum_other_doc_count: number;
  buckets: { key: FieldValue; doc_count: number; key_as_string?: string }[];
}

export interface SearchResult {
  total: number;
  maxScore: number | null;
  hits: SearchHit[];
  aggregations?: Record<string, TermsBuckets>;
}

export interface TermsEnumRequest {
  field: string;
  /** Prefix the terms start with ('' for all). */
  string: string;
  size: number;
  caseInsensitive: boolean;
}

export interface SearchIndexes {
  /** Builds index `key` from the documents (an index of that key is replaced); other indexes keep answering. */
  build(key: string, source: { documents: AsyncIterable<SearchDocument>; mappings: SearchMappings }): Promise<{ documents: number }>;
  search(key: string, request: SearchRequest): Promise<SearchResult>;
  count(key: string, request: { body: Record<string, unknown>; query: QueryNode }): Promise<number>;
  termsEnum(key: string, request: TermsEnumRequest): Promise<string[]>;
  /** The index's field types: the mapping given and the types detected. */
  mappings(key: string): Promise<SearchMappings>;
  /** Removes index `key`; a missing index is not an error. */
  drop(key: string): Promise<void>;
}

/** The index `key` does not exist (never built, or dropped). */
export class SearchIndexMissingError extends Error {
  constructor(key: string) {
    super(`search index ${key} does not exist`);
    this.name = 'SearchIndexMissingError';
  }
}
