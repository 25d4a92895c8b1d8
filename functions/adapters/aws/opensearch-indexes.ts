/**
 * SearchIndexes on Amazon OpenSearch (Service or Serverless) or any OpenSearch/Elasticsearch-
 * compatible cluster, through `@opensearch-project/opensearch`. One index per service snapshot
 * (`<prefix><key>`, key made safe), created with the mapping (text fields get a `keyword`
 * sub-field, as Elasticsearch's dynamic mapping gives them) and `ignore_malformed`, filled with
 * `_bulk`. Searches and counts pass the client's Query DSL body through unchanged.
 */
import { Client, errors } from '@opensearch-project/opensearch';
import { AwsSigv4Signer } from '@opensearch-project/opensearch/aws-v3';
import { ValidationError } from '../../domain/shared/errors.js';
import type { Logger } from '../../ports/logger.js';
import {
  SearchIndexMissingError,
  type FieldType,
  type QueryNode,
  type SearchDocument,
  type SearchIndexes,
  type SearchMappings,
  type SearchRequest,
  type SearchResult,
  type TermsEnumRequest,
} from '../../ports/search-index.js';

const BULK_DOCUMENTS = 1000;

export interface OpenSearchSettings {
  /** Endpoint, e.g. https://search-x.eu-west-1.es.amazonaws.com (user:password@ for basic auth). */
  url: string;
  /** Signs requests with the function's role (Amazon OpenSearch): its region and service. */
  aws?: { region: string; service: 'es' | 'aoss' };
  /** Prefix of the platform's index names. */
  prefix?: string;
}

/** An index name OpenSearch accepts: lower case, no `/\*?"<>| ,#:`, not starting with `_-+`, at most 255 bytes. */
export function indexName(prefix: string, key: string): string {
  const safe = key.toLowerCase().replace(/[^a-z0-9_-]+/g, '-');
  return `${prefix}${safe}`.slice(0, 255);
}

const isMissing = (e: unknown) => e instanceof errors.ResponseError && e.statusCode === 404;

export class OpenSearchIndexes implements SearchIndexes {
  readonly client: Client;
  private readonly prefix: string;

  constructor(
    settings: OpenSearchSettings,
    private readonly logger: Logger,
  ) {
    this.prefix = settings.prefix ?? 'ldp-';
    this.client = new Client({
      node: settings.url,
      ...(settings.aws ? AwsSigv4Signer({ region: settings.aws.region, service: settings.aws.service }) : {}),
    });
  }

  private index(key: string): string {
    return indexName(this.prefix, key);
  }

  private async call<T = Record<string, any>>(key: string, params: { method: string; path: string; body?: unknown; bulkBody?: unknown[] }): Promise<T> {
    try {
      const response = await this.client.transport.request(params as never);
      return response.body as T;
    } catch (e) {
      if (isMissing(e) && (e as errors.ResponseError).body?.error?.type === 'index_not_found_exception') throw new SearchIndexMissingError(key);
      if (e instanceof errors.ResponseError && e.statusCode === 400) {
        // The cluster refused a request we passed through: its reason is about the client's query.
        const reason = e.body?.error?.root_cause?.[0]?.reason ?? e.body?.error?.reason ?? 'the search engine refused the request';
        throw new ValidationError(`query: ${String(reason)}`);
      }
      throw e;
    }
  }

  async build(key: string, source: { documents: AsyncIterable<SearchDocument>; mappings: SearchMappings }): Promise<{ documents: number }> {
    const index = this.index(key);
    await this.drop(key);
    const properties = Object.fromEntries(Object.entries(source.mappings).map(([field, m]) => [field, fieldMapping(m.type)]));
    await this.call(key, {
      method: 'PUT',
      path: `/${index}`,
      body: { settings: { 'index.mapping.ignore_malformed': true, 'index.mapping.total_fields.limit': 10_000 }, mappings: { dynamic: true, properties } },
    });
    let count = 0;
    let batch: unknown[] = [];
    const flush = async () => {
      if (batch.length === 0) return;
      const result = await this.call<{ errors: boolean; items: { index?: { error?: { reason?: string } } }[] }>(key, { method: 'POST', path: '/_bulk', bulkBody: batch });
      batch = [];
      if (result.errors) {
        const first = result.items.find((i) => i.index?.error)?.index?.error?.reason;
        throw new Error(`indexing refused documents: ${first ?? 'see the cluster logs'}`);
      }
    };
    for await (const doc of source.documents) {
      batch.push({ index: { _index: index, _id: doc._id } }, doc.fields);
      count++;
      if (batch.length >= BULK_DOCUMENTS * 2) await flush();
    }
    await flush();
    await this.call(key, { method: 'POST', path: `/${index}/_refresh` });
    this.logger.info('search index built on OpenSearch', { index, documents: count });
    return { documents: count };
  }

  async search(key: string, request: SearchRequest): Promise<SearchResult> {
    const body = await this.call<any>(key, { method: 'POST', path: `/${this.index(key)}/_search`, body: request.body });
    const total = typeof body.hits?.total === 'number' ? body.hits.total : (body.hits?.total?.value ?? 0);
    return {
      total,
      maxScore: body.hits?.max_score ?? null,
      hits: (body.hits?.hits ?? []).map((h: any) => ({
        _id: h._id,
        _score: h._score ?? null,
        _source: h._source ?? {},
        ...(h.highlight ? { highlight: h.highlight } : {}),
        ...(h.sort ? { sort: h.sort } : {}),
      })),
      ...(body.aggregations ? { aggregations: body.aggregations } : {}),
    };
  }

  async count(key: string, request: { body: Record<string, unknown>; query: QueryNode }): Promise<number> {
    const body = await this.call<{ count: number }>(key, { method: 'POST', path: `/${this.index(key)}/_count`, body: request.body });
    return body.count;
  }

  /** OpenSearch has no _terms_enum: a terms aggregation over the field's keywords with the prefix as `include`. */
  async termsEnum(key: string, request: TermsEnumRequest): Promise<string[]> {
    const types = await this.mappings(key);
    const field = types[request.field]?.type === 'text' ? `${request.field}.keyword` : request.field;
    const escaped = request.string.replace(/[.?+*|{}[\]()"\\#@&<>~]/g, '\\$&');
    const include = request.caseInsensitive ? [...escaped].map((c) => (c.toLowerCase() !== c.toUpperCase() ? `[${c.toLowerCase()}${c.toUpperCase()}]` : c)).join('') : escaped;
    const body = await this.call<any>(key, {
      method: 'POST',
      path: `/${this.index(key)}/_search`,
      body: { size: 0, aggs: { terms: { terms: { field, include: `${include}.*`, size: request.size, order: { _key: 'asc' } } } } },
    });
    return (body.aggregations?.terms?.buckets ?? []).map((b: { key: unknown; key_as_string?: string }) => b.key_as_string ?? String(b.key));
  }

  async mappings(key: string): Promise<SearchMappings> {
    const index = this.index(key);
    const body = await this.call<any>(key, { method: 'GET', path: `/${index}/_mapping` });
    const properties = (Object.values(body)[0] as any)?.mappings?.properties ?? {};
    return Object.fromEntries(Object.entries(properties).map(([f, m]) => [f, { type: (m as { type: FieldType }).type }]));
  }

  async drop(key: string): Promise<void> {
    try {
      await this.client.transport.request({ method: 'DELETE', path: `/${this.index(key)}` });
    } catch (e) {
      if (!isMissing(e)) throw e;
    }
  }
}

function fieldMapping(type: FieldType): Record<string, unknown> {
  if (type === 'text') return { type: 'text', fields: { keyword: { type: 'keyword', ignore_above: 256 } } };
  if (type === 'scaled_float') return { type, scaling_factor: 100 };
  return { type };
}
