/**
 * Text search services (issue 15) through HTTP on the embedded platform: a generated dataset of
 * 3,000 subjects in several languages with numbers and dates. Config rules, reply shape, relevance,
 * every Query DSL clause offered, _count, _msearch, _terms_enum, mappings.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importFiles } from '../support/imports.js';
import { TestPlatform } from '../support/platform.js';
import { startService } from '../support/services.js';
import { CATEGORIES, EX, F, itemIri, searchDataset } from '../support/search-data.js';

const COUNT = 3000;
let p: TestPlatform;
let alice: string;

const BASE = '/datasets/alice/catalog/services/idx';
const CONFIG = {
  indexTemplates: [{ name: 'main', index_patterns: 'index', composed_of: ['dates'] }],
  componentTemplates: [{ name: 'dates', template: { mappings: { properties: { 'https://schema.org/dateCreated': { type: 'date' }, 'https://example.org/def/category': { type: 'keyword' } } } } }],
};

const search = async (body: unknown, path = '_search') => {
  const res = await p.request('POST', `${BASE}/${path}`, { body });
  expect(res.status, res.text).toBe(200);
  return res.body as { hits: { total: { value: number }; max_score: number | null; hits: any[] }; aggregations?: any };
};
const ids = async (query: unknown, extra: Record<string, unknown> = {}) => (await search({ query, size: 50, ...extra })).hits.hits.map((h) => h._id as string);
const total = async (query: unknown) => (await search({ query, size: 0 })).hits.total.value;
const bad = async (body: unknown, path = '_search') => {
  const res = await p.request('POST', `${BASE}/${path}`, { body });
  expect(res.status, res.text).toBe(400);
  return res.body.message as string;
};

beforeAll(async () => {
  p = await TestPlatform.start();
  alice = await p.createUser('alice');
  await p.createDataset('alice', 'catalog', 'public', alice);
  const job = await importFiles(p, alice, 'alice/catalog', [{ name: 'catalog.nt', content: searchDataset(COUNT) }]);
  expect(job.status).toBe('finished');
  const service = await startService(p, alice, 'alice/catalog', { name: 'idx', type: 'elasticSearch', config: CONFIG });
  expect(service.status, JSON.stringify(service.error)).toBe('running');
}, 120_000);
afterAll(async () => {
  await p?.stop();
});

describe('search service configuration', () => {
  const create = (body: Record<string, unknown>) => p.request('POST', '/datasets/alice/catalog/services', { token: alice, body: { type: 'elasticSearch', ...body } });

  it('refuses each broken rule with a 400 naming the field', async () => {
    const cases: [unknown, RegExp][] = [
      [{ indexTemplates: [{ name: 'a' }] }, /config\.indexTemplates\[0\]\.index_patterns: required/],
      [{ indexTemplates: [{ name: 'a', index_patterns: 'other' }] }, /config\.indexTemplates\[0\]\.index_patterns: must be "index"/],
      [{ indexTemplates: [{ index_patterns: 'index' }] }, /config\.indexTemplates\[0\]\.name: required/],
      [{ componentTemplates: [{ name: 'c', template: { mappings: { properties: {} } } }] }, /config\.indexTemplates: required with componentTemplates/],
      [{ indexTemplates: [{ name: 'a', index_patterns: 'index' }], componentTemplates: [{ name: 'c', template: { mappings: { properties: {} } } }] }, /composed_of: must list the component template "c"/],
      [{ indexTemplates: [{ name: 'a', index_patterns: 'index', composed_of: ['c'] }], componentTemplates: [{ name: 'c' }] }, /config\.componentTemplates\[0\]\.template: required/],
      [{ indexTemplates: [{ name: 'a', index_patterns: 'index', composed_of: ['nope'] }] }, /composed_of: "nope" is not a component template/],
      [
        { indexTemplates: [{ name: 'a', index_patterns: 'index', composed_of: ['c'] }], componentTemplates: [{ name: 'c', template: { mappings: { properties: { 'https://schema.org/x': { type: 'dat' } } } } }] },
        /properties\["https:\/\/schema\.org\/x"\]\.type: "dat" is not a field type/,
      ],
      [{ indexTemplates: 'x' }, /config\.indexTemplates: must be an array/],
      [{ mappings: {} }, /config\.mappings: not a field of config/],
    ];
    for (const [config, message] of cases) {
      const res = await create({ name: 'broken', config });
      expect(res.status, JSON.stringify(config)).toBe(400);
      expect(res.body.message).toMatch(message);
    }
    expect((await p.request('GET', '/datasets/alice/catalog/services/broken')).status).toBe(404);
  });

  it('accepts the spec name textSearch and reports the service as TriplyDB does', async () => {
    const res = await p.request('GET', '/datasets/alice/catalog/services/idx');
    expect(res.body).toMatchObject({ type: 'elasticSearch', status: 'running', outOfSync: false, capabilities: ['elasticSearch'], endpoint: `${p.url}${BASE}/search` });
    expect(res.body.config.indexTemplates[0]).toEqual({ name: 'main', index_patterns: 'index', composed_of: ['dates'] });
    const spec = await startService(p, alice, 'alice/catalog', { name: 'spec-name', type: 'textSearch' });
    expect(spec).toMatchObject({ type: 'elasticSearch', status: 'running' });
    // A search service answers no SPARQL, and a SPARQL service no search.
    expect((await p.request('GET', `/datasets/alice/catalog/services/spec-name/sparql?query=${encodeURIComponent('ASK {}')}`)).status).toBe(400);
    expect((await p.request('DELETE', '/datasets/alice/catalog/services/spec-name', { token: alice })).status).toBe(204);
    // TriplyDB's V1 name (its docs still show it) is the same type.
    const v1 = await p.request('POST', '/datasets/alice/catalog/services', { token: alice, body: { name: 'v1-name', type: 'elasticsearch' } });
    expect(v1.body.type).toBe('elasticSearch');
    expect((await p.request('DELETE', '/datasets/alice/catalog/services/v1-name', { token: alice })).status).toBe(204);
  });

  it('gives the mapping: the configured types and the detected ones', async () => {
    const res = await p.request('GET', `${BASE}/mappings`);
    expect(res.status).toBe(200);
    const props = res.body.index.mappings.properties;
    expect(props[F.dateCreated]).toEqual({ type: 'date' });
    expect(props[F.category]).toEqual({ type: 'keyword' });
    expect(props[F.price]).toEqual({ type: 'double' });
    expect(props[F.name]).toEqual({ type: 'text' });
  });
});

describe('search replies', () => {
  it('simple search: one term, fuzzy; hits in Elasticsearch shape with IRI keys (dots as spaces) and arrays', async () => {
    const res = await p.request('GET', `${BASE}/search?query=pikachu`);
    expect(res.status, res.text).toBe(200);
    const [first, second] = res.body.hits.hits;
    expect(first._id).toBe(`${EX}id/pikachu`);
    expect(first._score).toBeGreaterThan(0);
    expect(first[F.name]).toEqual(['Pikachu', 'ピカチュウ']);
    expect(first[F.price]).toEqual([25]);
    expect(first._source[F.category]).toEqual(['game']);
    // Exact beats fuzzy.
    expect(second._id).toBe(`${EX}id/pikachuu`);
    expect(second._score).toBeLessThan(first._score);
    const typo = await p.request('GET', `${BASE}/search?query=pikachoo`);
    expect(typo.body.hits.hits.map((h: any) => h._id)).toContain(`${EX}id/pikachu`);
  });

  it('ranks words in order above the same words scattered', async () => {
    const res = await p.request('GET', `${BASE}/search?query=${encodeURIComponent('quick brown fox')}`);
    expect(res.body.hits.hits.slice(0, 2).map((h: any) => h._id)).toEqual([`${EX}id/phrase`, `${EX}id/scattered`]);
    expect(await ids({ match_phrase: { [F.description]: 'quick brown fox' } })).toEqual([`${EX}id/phrase`]);
  });

  it('searches language-tagged strings in every language, and blank nodes as their own documents', async () => {
    expect(await ids({ match: { [F.name]: 'ピカチュウ' } })).toEqual([`${EX}id/pikachu`]);
    for (const word of ['kasteel', 'schloss', 'château', 'castle']) expect(await total({ match: { [F.description]: word } })).toBeGreaterThan(50);
    const blank = await ids({ match: { [F.name]: 'anonymous' } });
    expect(blank).toHaveLength(1);
    expect(blank[0]).toMatch(/^_:/);
  });

  it('paginates with from/size, sorts, filters _source and highlights', async () => {
    const sorted = await search({ query: { range: { [F.price]: { gte: 990 } } }, sort: [{ [F.price]: 'desc' }, { _id: 'asc' }], from: 2, size: 3, _source: [F.price] });
    expect(sorted.hits.total.value).toBe(30);
    expect(sorted.hits.hits.map((h) => h.sort[0])).toEqual([999, 998, 998]);
    expect(sorted.hits.hits[0]._score).toBeNull();
    expect(Object.keys(sorted.hits.hits[0]._source)).toEqual([F.price]);
    expect(sorted.hits.hits[0][F.name]).toBeUndefined();
    const byDate = await search({ query: { match: { [F.category]: 'film' } }, sort: [{ [F.dateCreated]: { order: 'asc' } }], size: 2, _source: false });
    expect(byDate.hits.hits.map((h) => h._id)).toEqual([itemIri(1), itemIri(5)]);
    expect(byDate.hits.hits[0]._source).toBeUndefined();
    const excluded = await search({ query: { ids: { values: [itemIri(7)] } }, _source: { excludes: ['https://schema org/*'] } });
    expect(Object.keys(excluded.hits.hits[0]._source).sort()).toEqual([F.type, F.category, F.price, F.rating].sort());
    const lit = await search({ query: { match_phrase: { [F.description]: 'brown fox' } }, highlight: { fields: { '*': {} }, pre_tags: ['<b>'], post_tags: ['</b>'] } });
    expect(lit.hits.hits[0].highlight).toEqual({ [F.description]: ['a quick <b>brown</b> <b>fox</b> sleeps in the sun'] });
  });

  it('aggregates terms of the matching documents', async () => {
    const res = await search({ query: { range: { [F.price]: { lt: 10 } } }, size: 0, aggs: { cats: { terms: { field: F.category } } } });
    const buckets = res.aggregations.cats.buckets;
    expect(buckets.map((b: any) => b.key).sort()).toEqual([...CATEGORIES].sort());
    expect(buckets.reduce((n: number, b: any) => n + b.doc_count, 0)).toBe(res.hits.total.value);
    const top = await search({ size: 0, aggs: { cats: { terms: { field: `${F.category}.keyword`, size: 1 } } } });
    expect(top.aggregations.cats.buckets).toHaveLength(1);
    expect(top.aggregations.cats.sum_other_doc_count).toBeGreaterThan(0);
  });
});

describe('Query DSL clauses', () => {
  it('match (operator, fuzziness, minimum_should_match), multi_match, match_phrase_prefix', async () => {
    expect(await ids({ match: { [F.name]: { query: 'pikachu', fuzziness: 0 } } })).toEqual([`${EX}id/pikachu`]);
    expect(await ids({ match: { [F.name]: { query: 'pikachu', fuzziness: 'AUTO' } } })).toEqual([`${EX}id/pikachu`, `${EX}id/pikachuu`]);
    expect(await ids({ match: { [F.description]: { query: 'quick brown cat', operator: 'and' } } })).toEqual([`${EX}id/scattered`]);
    expect(await ids({ match: { [F.description]: { query: 'quick sun cat', minimum_should_match: 2 } } })).toEqual(expect.arrayContaining([`${EX}id/phrase`, `${EX}id/scattered`]));
    expect(await ids({ multi_match: { query: 'pikachu', fields: [F.name, F.description] } })).toEqual([`${EX}id/pikachu`]);
    expect(await ids({ multi_match: { query: 'quick brown', fields: ['https://schema org/*'], type: 'phrase' } })).toEqual([`${EX}id/phrase`]);
    expect(await ids({ match_phrase_prefix: { [F.description]: 'quick bro' } })).toEqual([`${EX}id/phrase`]);
  });

  it('simple_query_string and query_string', async () => {
    expect(await ids({ simple_query_string: { query: 'pikachu' } })).toEqual([`${EX}id/pikachu`]);
    expect(await ids({ simple_query_string: { query: '"brown fox" + -cat', fields: [F.description] } })).toEqual([`${EX}id/phrase`]);
    expect(await ids({ simple_query_string: { query: 'pika*' } })).toEqual(expect.arrayContaining([`${EX}id/pikachu`, `${EX}id/pikachuu`]));
    expect(await ids({ query_string: { query: 'fox AND NOT cat', fields: [F.description] } })).toEqual([`${EX}id/phrase`]);
    const esc = (f: string) => f.replace(/[:/ \\]/g, '\\$&');
    expect(await ids({ query_string: { query: `${esc(F.category)}:music AND ${esc(F.price)}:[0 TO 3]` } })).toEqual([itemIri(3), itemIri(1003), itemIri(2003)]);
    expect(await ids({ query_string: { query: 'pikachoo~' } })).toEqual(expect.arrayContaining([`${EX}id/pikachu`]));
    expect(await ids({ query_string: { query: '"quick fox"', fields: [F.description] } })).toEqual([]);
    expect(await ids({ query_string: { query: '"quick fox"', fields: [F.description], phrase_slop: 1 } })).toEqual([`${EX}id/phrase`]);
    expect(await bad({ query: { query_string: { query: '(fox AND' } } })).toMatch(/query\.query_string\.query: unbalanced parentheses/);
  });

  it('term, terms, prefix, wildcard, fuzzy, exists, ids', async () => {
    expect(await total({ term: { [F.category]: 'book' } })).toBe(COUNT / 4);
    expect(await total({ term: { [F.category]: 'Book' } })).toBe(0);
    expect(await total({ term: { [F.category]: { value: 'Book', case_insensitive: true } } })).toBe(COUNT / 4);
    expect(await total({ terms: { [F.category]: ['book', 'film'] } })).toBe(COUNT / 2);
    expect(await total({ term: { [F.price]: 25 } })).toBe(4);
    expect(await ids({ prefix: { [F.name]: 'pika' } })).toEqual([`${EX}id/pikachu`, `${EX}id/pikachuu`]);
    expect(await ids({ wildcard: { [F.name]: { value: 'pi?achu*' } } })).toEqual([`${EX}id/pikachu`, `${EX}id/pikachuu`]);
    expect(await ids({ fuzzy: { [F.name]: { value: 'pikachi' } } })).toEqual(expect.arrayContaining([`${EX}id/pikachu`, `${EX}id/pikachuu`]));
    expect(await total({ bool: { must_not: { exists: { field: F.price } } } })).toBe(5);
    expect(await ids({ ids: { values: [itemIri(3), itemIri(4), `${EX}nothing`] } })).toEqual([itemIri(3), itemIri(4)]);
  });

  it('range over numbers and dates', async () => {
    expect(await total({ range: { [F.price]: { gte: 10, lt: 20 } } })).toBe(30 + 1 /* pikachu */ - 1);
    expect(await total({ range: { [F.rating]: { gt: 4.8 } } })).toBe(COUNT / 50);
    expect(await ids({ range: { [F.dateCreated]: { gte: '2000-01-02', lte: '2000-01-03' } } })).toEqual([itemIri(1), itemIri(2)]);
    expect(await total({ range: { [F.dateCreated]: { lt: '2001-01-01T00:00:00Z' } } })).toBe(366);
  });

  it('bool: must, should, must_not, filter, minimum_should_match', async () => {
    const bool = { must: [{ match: { [F.description]: 'kasteel' } }], filter: [{ term: { [F.category]: 'film' } }, { range: { [F.price]: { lt: 100 } } }], must_not: [{ term: { [F.price]: 2 } }] };
    const hits = await search({ query: { bool }, size: 100 });
    expect(hits.hits.total.value).toBeGreaterThan(0);
    for (const h of hits.hits.hits) {
      expect(h[F.category]).toEqual(['film']);
      expect(h[F.price][0]).toBeLessThan(100);
    }
    const should = await total({ bool: { should: [{ term: { [F.category]: 'book' } }, { term: { [F.category]: 'film' } }, { range: { [F.price]: { lt: 4 } } }], minimum_should_match: 2 } });
    expect(should).toBe(6);
    const filterOnly = await search({ query: { bool: { filter: { term: { [F.category]: 'music' } } } }, size: 1 });
    expect(filterOnly.hits.hits[0]._score).toBe(0);
  });

  it('refuses what it does not support, naming it', async () => {
    expect(await bad({ query: { geo_shape: {} } })).toMatch(/query\.geo_shape: the query clause "geo_shape" is not supported/);
    expect(await bad({ query: { bool: { must: [{ match: { x: 'a' } }, { more_like_this: {} }] } } })).toMatch(/query\.bool\.must\[1\]\.more_like_this/);
    expect(await bad({ query: { match: { [F.name]: { query: 'a', nonsense: 1 } } } })).toMatch(/nonsense: not supported here/);
    expect(await bad({ suggest: {} })).toMatch(/^suggest: not supported in a search request/);
    expect(await bad({ query: { fuzzy: { [F.name]: { value: 'pika', prefix_length: 2 } } } })).toMatch(/fuzzy\.https:\/\/schema org\/name\.prefix_length: not supported here/);
    expect(await bad({ query: { match: { [F.name]: { query: 'x', analyzer: 'english' } } } })).toMatch(/analyzer: only "standard"/);
    expect(await bad({ query: { match_all: {} }, highlight: { fields: { [F.name]: { fragment_size: 10 } } } })).toMatch(/per-field options are not supported/);
    expect(await bad({ aggs: { x: { avg: { field: F.price } } } })).toMatch(/aggs\.x\.avg: the aggregation "avg" is not supported/);
    expect(await bad({ from: 9990, size: 20 })).toMatch(/from \+ size must be at most 10000/);
    expect(await bad({ sort: [{ [F.price]: 'up' }] })).toMatch(/sort\[0\]/);
    expect((await p.request('GET', `${BASE}/search`)).status).toBe(400);
    expect((await p.request('POST', `${BASE}/search`, { rawBody: 'not json', headers: { 'content-type': 'application/json' } })).status).toBe(400);
  });

  it('answers the same on search, elasticsearch and _search', async () => {
    const body = { query: { match: { [F.name]: 'pikachu' } } };
    const answers = await Promise.all(['search', 'elasticsearch', '_search'].map((path) => search(body, path)));
    const idLists = answers.map((a) => a.hits.hits.map((h) => h._id));
    expect(idLists).toEqual([[`${EX}id/pikachu`], [`${EX}id/pikachu`], [`${EX}id/pikachu`]]);
  });
});

describe('_count, _msearch, _terms_enum', () => {
  it('_count answers {count, _shards}', async () => {
    const res = await p.request('POST', `${BASE}/_count`, { body: { query: { simple_query_string: { query: 'pikachu' } } } });
    expect(res.body).toEqual({ count: 1, _shards: { total: 1, successful: 1, skipped: 0, failed: 0 } });
    expect((await p.request('POST', `${BASE}/_count`)).body.count).toBe(COUNT + 6);
    expect((await p.request('POST', `${BASE}/_count`, { body: { size: 1 } })).status).toBe(400);
  });

  it('_msearch answers each search of the NDJSON body, an error in one as its item', async () => {
    const ndjson = [{}, { query: { term: { [F.category]: 'book' } }, size: 1 }, { index: 'index' }, { query: { nope: {} } }, {}, { query: { ids: { values: [itemIri(1)] } } }].map((l) => JSON.stringify(l)).join('\n') + '\n';
    const res = await p.request('POST', `${BASE}/_msearch`, { rawBody: ndjson, headers: { 'content-type': 'application/x-ndjson' } });
    expect(res.status, res.text).toBe(200);
    const [a, b, c] = res.body.responses;
    expect(a.hits.total.value).toBe(COUNT / 4);
    expect(b.status).toBe(400);
    expect(b.error.reason).toMatch(/"nope" is not supported/);
    expect(c.hits.hits[0]._id).toBe(itemIri(1));
    const odd = await p.request('POST', `${BASE}/_msearch`, { rawBody: '{}\n', headers: { 'content-type': 'application/x-ndjson' } });
    expect(odd.status).toBe(400);
    expect(odd.body.message).toMatch(/header line followed by a body line/);
  });

  it('_terms_enum lists the values of a field by prefix', async () => {
    const res = await p.request('POST', `${BASE}/_terms_enum`, { body: { field: F.category, string: 'f' } });
    expect(res.body).toMatchObject({ terms: ['film'], complete: true });
    expect((await p.request('POST', `${BASE}/_terms_enum`, { body: { string: 'f' } })).body.message).toMatch(/field: required/);
  });
});
