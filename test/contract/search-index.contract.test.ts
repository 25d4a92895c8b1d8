/**
 * SearchIndexes contract (ports/search-index.ts): one suite run against the embedded engine
 * (MiniSearch, indexes as blobs) and, through the OpenSearch adapter, against a real OpenSearch
 * when OPENSEARCH_URL names one (skipped loudly otherwise). The OpenSearch adapter's requests are
 * also checked against recorded Elasticsearch request shapes (fixtures/elasticsearch-requests.json)
 * by pointing the client at a local HTTP server that records what it receives.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FsBlobStore } from '../../functions/adapters/local/fs-blob-store.js';
import { MiniSearchIndexes } from '../../functions/adapters/common/minisearch/minisearch-indexes.js';
import { indexName, OpenSearchIndexes } from '../../functions/adapters/aws/opensearch-indexes.js';
import { defaultLogger } from '../../functions/adapters/common/powertools-logger.js';
import { compileCount, compileSearch } from '../../functions/domain/search/query-dsl.js';
import { SearchIndexMissingError, type SearchDocument, type SearchIndexes, type SearchMappings } from '../../functions/ports/search-index.js';

const NAME = 'https://schema org/name';
const DATE = 'https://schema org/dateCreated';
const PRICE = 'https://example org/price';
const CATEGORY = 'https://example org/category';

const DOCS: SearchDocument[] = [
  { _id: 'https://example.org/pikachu', fields: { [NAME]: ['Pikachu'], [PRICE]: [25], [DATE]: ['1996-02-27'], [CATEGORY]: ['electric'] } },
  { _id: 'https://example.org/pikachuu', fields: { [NAME]: ['Pikachuu'], [PRICE]: [5], [DATE]: ['2001-05-01'], [CATEGORY]: ['electric'] } },
  { _id: 'https://example.org/raichu', fields: { [NAME]: ['Raichu', 'ライチュウ'], [PRICE]: [60], [DATE]: ['1996-02-27T10:00:00Z'], [CATEGORY]: ['electric'] } },
  { _id: 'https://example.org/bulbasaur', fields: { [NAME]: ['Bulbasaur'], [PRICE]: [45], [DATE]: ['1996-02-27'], [CATEGORY]: ['grass'] } },
  { _id: 'https://example.org/fox', fields: { [NAME]: ['a quick brown fox'], [CATEGORY]: ['animal'] } },
  { _id: 'https://example.org/scattered', fields: { [NAME]: ['the fox was brown and quick'], [CATEGORY]: ['animal'] } },
];
const MAPPINGS: SearchMappings = { [NAME]: { type: 'text' }, [DATE]: { type: 'date' }, [PRICE]: { type: 'double' }, [CATEGORY]: { type: 'keyword' } };

async function* docs(): AsyncGenerator<SearchDocument> {
  yield* DOCS;
}

const ids = async (engine: SearchIndexes, key: string, body: unknown) => (await engine.search(key, compileSearch(body))).hits.map((h) => h._id);

function contract(name: string, make: () => Promise<{ engine: SearchIndexes; close(): Promise<void> }>) {
  describe(name, () => {
    let engine: SearchIndexes;
    let close: () => Promise<void>;
    const key = `datasets/contract/search/${name.replace(/\W/g, '')}/${Date.now()}`;

    beforeAll(async () => {
      ({ engine, close } = await make());
      expect(await engine.build(key, { documents: docs(), mappings: MAPPINGS })).toEqual({ documents: DOCS.length });
    }, 60_000);
    afterAll(async () => {
      await engine?.drop(key);
      await close?.();
    });

    it('ranks an exact match above a fuzzy one', async () => {
      expect(await ids(engine, key, { query: { match: { [NAME]: { query: 'pikachu', fuzziness: 'AUTO' } } } })).toEqual(['https://example.org/pikachu', 'https://example.org/pikachuu']);
    });

    it('matches phrases only in order', async () => {
      expect(await ids(engine, key, { query: { match_phrase: { [NAME]: 'quick brown fox' } } })).toEqual(['https://example.org/fox']);
    });

    it('ranges over numbers and dates, terms on keywords, bool and sort', async () => {
      expect(await ids(engine, key, { query: { range: { [PRICE]: { gte: 25, lt: 60 } } }, sort: [{ [PRICE]: 'asc' }] })).toEqual(['https://example.org/pikachu', 'https://example.org/bulbasaur']);
      expect(await ids(engine, key, { query: { range: { [DATE]: { gte: '1996-02-27', lt: '1996-02-28' } } }, sort: [{ [PRICE]: 'desc' }] })).toEqual([
        'https://example.org/raichu',
        'https://example.org/bulbasaur',
        'https://example.org/pikachu',
      ]);
      expect(
        await ids(engine, key, { query: { bool: { filter: [{ term: { [CATEGORY]: 'electric' } }], must_not: [{ ids: { values: ['https://example.org/raichu'] } }] } }, sort: [{ _id: 'asc' }] }),
      ).toEqual(['https://example.org/pikachu', 'https://example.org/pikachuu']);
    });

    it('counts, aggregates terms and highlights', async () => {
      expect(await engine.count(key, compileCount({ query: { term: { [CATEGORY]: 'electric' } } }))).toBe(3);
      const result = await engine.search(key, compileSearch({ size: 1, query: { match: { [NAME]: 'raichu' } }, aggs: { cats: { terms: { field: CATEGORY } } }, highlight: { fields: { [NAME]: {} } } }));
      expect(result.total).toBe(1);
      expect(result.hits[0]!._source[NAME]).toEqual(['Raichu', 'ライチュウ']);
      expect(result.hits[0]!.highlight?.[NAME]).toEqual(['<em>Raichu</em>']);
      expect(result.aggregations?.cats?.buckets).toEqual([{ key: 'electric', doc_count: 1 }]);
    });

    it('lists terms by prefix and gives the mapping', async () => {
      expect(await engine.termsEnum(key, { field: CATEGORY, string: 'e', size: 10, caseInsensitive: false })).toEqual(['electric']);
      const mappings = await engine.mappings(key);
      expect(mappings[DATE]?.type).toBe('date');
      expect(mappings[PRICE]?.type).toBe('double');
    });

    it('reports a dropped index as missing', async () => {
      const other = `${key}-dropped`;
      await engine.build(other, { documents: docs(), mappings: MAPPINGS });
      await engine.drop(other);
      await expect(engine.count(other, compileCount({}))).rejects.toBeInstanceOf(SearchIndexMissingError);
      await engine.drop(other);
    });
  });
}

contract('embedded engine (MiniSearch, indexes as blobs)', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'search-contract-'));
  const blobs = new FsBlobStore(dir);
  return {
    // Loaded anew by a second instance: what a restart or a cold function reads back.
    engine: new MiniSearchIndexes(blobs, { logger: defaultLogger, maxLoaded: 1 }),
    close: () => rm(dir, { recursive: true, force: true }),
  };
});

describe('embedded engine: memory bounded by documents, indexes read back from their blobs', () => {
  it('answers from every index while holding fewer in memory than it built', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'search-bounded-'));
    try {
      const engine = new MiniSearchIndexes(new FsBlobStore(dir), { logger: defaultLogger, maxLoadedDocuments: DOCS.length });
      const keys = ['a', 'b', 'c'].map((k) => `datasets/bounded/search/${k}/m`);
      for (const k of keys) await engine.build(k, { documents: docs(), mappings: MAPPINGS });
      for (let round = 0; round < 2; round++) {
        for (const k of keys) expect(await ids(engine, k, { query: { match: { [NAME]: 'raichu' } } })).toEqual(['https://example.org/raichu']);
      }
      // A second engine over the same blobs (a restart, a cold function) answers without building.
      const cold = new MiniSearchIndexes(new FsBlobStore(dir), { logger: defaultLogger });
      expect(await cold.count(keys[0]!, compileCount({ query: { term: { [CATEGORY]: 'grass' } } }))).toBe(1);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

const OPENSEARCH_URL = process.env.OPENSEARCH_URL;
if (!OPENSEARCH_URL) {
  const line = 'OPENSEARCH_URL is not set: the SearchIndexes contract does not run against a real OpenSearch (set it to e.g. http://127.0.0.1:9200).';
  console.warn(`\n${'!'.repeat(100)}\n!! SKIPPING: ${line}\n${'!'.repeat(100)}\n`);
  describe.skip('OpenSearch adapter against a real OpenSearch (OPENSEARCH_URL)', () => {
    it('needs OPENSEARCH_URL', () => {
      expect(process.env.OPENSEARCH_URL).toBeDefined();
    });
  });
} else {
  contract('OpenSearch adapter against OPENSEARCH_URL', async () => ({
    engine: new OpenSearchIndexes({ url: OPENSEARCH_URL, prefix: 'ldp-contract-' }, defaultLogger),
    close: async () => {},
  }));
}

describe('OpenSearch adapter: requests in Elasticsearch shapes', () => {
  interface Recorded {
    method: string;
    path: string;
    contentType?: string;
    body?: unknown;
    ndjson?: unknown[];
  }
  const recorded: Recorded[] = [];
  let server: Server;
  let url: string;
  const key = 'datasets/d1/search/s1/m1';
  const index = indexName('ldp-', key);
  let dropped = 0;

  beforeAll(async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const contentType = req.headers['content-type']?.split(';')[0];
        const path = (req.url ?? '').split('?')[0]!;
        const entry: Recorded = { method: req.method!, path };
        if (text) {
          entry.contentType = contentType;
          if (contentType === 'application/x-ndjson') entry.ndjson = text.split('\n').filter(Boolean).map((l) => JSON.parse(l));
          else entry.body = JSON.parse(text);
        }
        recorded.push(entry);
        const answer = (status: number, body: unknown) => {
          res.writeHead(status, { 'content-type': 'application/json' });
          res.end(JSON.stringify(body));
        };
        if (path.startsWith('/ldp-missing/')) return answer(404, { error: { type: 'index_not_found_exception', reason: 'no such index [ldp-missing]' }, status: 404 });
        if (path.startsWith('/ldp-refused/')) return answer(400, { error: { type: 'search_phase_execution_exception', root_cause: [{ type: 'query_shard_exception', reason: 'failed to create query: For input string: "abc"' }] }, status: 400 });
        if (req.method === 'DELETE') return dropped++ === 0 ? answer(404, { error: { type: 'index_not_found_exception', reason: 'no such index' }, status: 404 }) : answer(200, { acknowledged: true });
        if (req.method === 'PUT') return answer(200, { acknowledged: true, index });
        if (path === '/_bulk') return answer(200, { errors: false, items: [{ index: { status: 201 } }, { index: { status: 201 } }] });
        if (path.endsWith('/_refresh')) return answer(200, { _shards: { total: 1, successful: 1, failed: 0 } });
        if (path.endsWith('/_count')) return answer(200, { count: 1, _shards: { total: 1, successful: 1, skipped: 0, failed: 0 } });
        if (path.endsWith('/_mapping')) return answer(200, { [index]: { mappings: { properties: { [NAME]: { type: 'text' }, [DATE]: { type: 'date' } } } } });
        if (path.endsWith('/_search')) {
          const body = JSON.parse(text) as { aggs?: unknown };
          if (body.aggs) return answer(200, { hits: { total: { value: 2, relation: 'eq' }, hits: [] }, aggregations: { terms: { buckets: [{ key: 'Beta', doc_count: 1 }, { key: 'Bèta', doc_count: 1 }] } } });
          return answer(200, {
            took: 1,
            hits: { total: { value: 1, relation: 'eq' }, max_score: 1.5, hits: [{ _index: index, _id: 'https://example.org/a', _score: 1.5, _source: { [NAME]: ['Alpha'] }, highlight: { [NAME]: ['<em>Alpha</em>'] }, sort: [1] }] },
          });
        }
        answer(400, { error: { type: 'unexpected', reason: `${req.method} ${path}` } });
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('sends what the fixture records, with the Query DSL body unchanged, and reads the replies', async () => {
    const engine = new OpenSearchIndexes({ url }, defaultLogger);
    const documents: SearchDocument[] = [
      { _id: 'https://example.org/a', fields: { [NAME]: ['Alpha'], [DATE]: ['2020-01-01'], 'https://example org/price': [1] } },
      { _id: 'https://example.org/b', fields: { [NAME]: ['Beta', 'Bèta'], 'https://example org/price': [2] } },
    ];
    const mappings: SearchMappings = { [NAME]: { type: 'text' }, [DATE]: { type: 'date' }, 'https://example org/price': { type: 'double' } };
    expect(await engine.build(key, { documents: (async function* () { yield* documents; })(), mappings })).toEqual({ documents: 2 });
    const body = {
      query: { bool: { must: [{ match: { [NAME]: 'alpha' } }], filter: [{ range: { 'https://example org/price': { gte: 1 } } }] } },
      sort: [{ 'https://example org/price': 'desc' }],
      size: 5,
      highlight: { fields: { '*': {} } },
    };
    const result = await engine.search(key, compileSearch(body));
    expect(result).toEqual({ total: 1, maxScore: 1.5, hits: [{ _id: 'https://example.org/a', _score: 1.5, _source: { [NAME]: ['Alpha'] }, highlight: { [NAME]: ['<em>Alpha</em>'] }, sort: [1] }] });
    expect(await engine.count(key, compileCount({ query: { term: { [`${NAME}.keyword`]: 'Beta' } } }))).toBe(1);
    expect(await engine.termsEnum(key, { field: NAME, string: 'B', size: 10, caseInsensitive: false })).toEqual(['Beta', 'Bèta']);
    await engine.drop(key);

    const fixture = JSON.parse(await readFile(new URL('./fixtures/elasticsearch-requests.json', import.meta.url), 'utf8')) as { requests: Recorded[] };
    const expected = JSON.parse(JSON.stringify(fixture.requests).replaceAll('<INDEX>', index)) as Recorded[];
    expect(recorded).toEqual(expected);
  });

  it('reports a missing index as missing, and a query the cluster refuses as a 400 with its reason', async () => {
    const engine = new OpenSearchIndexes({ url }, defaultLogger);
    await expect(engine.count('missing', compileCount({}))).rejects.toBeInstanceOf(SearchIndexMissingError);
    await expect(engine.search('refused', compileSearch({ query: { term: { [PRICE]: 'abc' } } }))).rejects.toThrow(/query: failed to create query: For input string: "abc"/);
  });
});
