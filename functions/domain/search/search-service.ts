/**
 * Searching a text search service: who may (the dataset's readers, as for every service), which
 * index answers (the service's current snapshot), and the Elasticsearch requests and replies of
 * the routes (search, _search, _msearch, _count, _terms_enum, mappings).
 */
import { SearchIndexMissingError, type SearchRequest, type TermsEnumRequest } from '../../ports/search-index.js';
import type { AccessService } from '../datasets/access-service.js';
import type { Caller } from '../shared/caller.js';
import { NotFoundError, ServiceUnavailableError, ValidationError } from '../shared/errors.js';
import type { Platform } from '../shared/platform.js';
import { compileCount, compileSearch, sourceFilter } from './query-dsl.js';
import { searchReply, SHARDS } from './reply.js';
import { indexKey } from './search-lifecycle.js';

/** Searches one `_msearch` request holds at most. */
export const MAX_MSEARCH = 100;

export interface SearchTarget {
  caller: Caller | null;
  account: string;
  dataset: string;
  service: string;
}

export class SearchService {
  constructor(
    private readonly platform: Platform,
    private readonly access: AccessService,
  ) {}

  /** The index answering for the service, once the caller may read its dataset. */
  private async index(target: SearchTarget): Promise<string> {
    const { dataset } = await this.access.readableDataset(target.caller, target.account, target.dataset);
    const service = await this.platform.store.getService(dataset.id, target.service);
    if (!service) throw new NotFoundError(`Service "${target.service}" does not exist in ${target.account}/${target.dataset}.`);
    if (service.type !== 'elasticSearch') throw new NotFoundError(`Service "${target.service}" is a SPARQL service; text search is offered by services of type elasticSearch.`);
    if (service.status !== 'running' && service.status !== 'updating') {
      throw new ServiceUnavailableError(`Service "${target.service}" is ${service.status}; it answers searches once it is running.`);
    }
    return indexKey(service, service.snapshot);
  }

  private async run<T>(target: SearchTarget, work: (key: string) => Promise<T>): Promise<T> {
    const key = await this.index(target);
    try {
      return await work(key);
    } catch (e) {
      if (e instanceof SearchIndexMissingError) throw new ServiceUnavailableError(`Service "${target.service}" has no index; restart it (POST {"restart": true}).`);
      throw e;
    }
  }

  /** GET search?query=: one term (or a few words), fuzzy; words in order score higher. */
  simple(target: SearchTarget, text: string, paging: { from?: number; size?: number }): Promise<Record<string, unknown>> {
    if (!text.trim()) throw new ValidationError('query: give the text to search for (?query=...).');
    if (text.length > 1000) throw new ValidationError('query: at most 1000 characters.');
    const body = {
      query: {
        bool: {
          should: [
            { multi_match: { query: text, fields: ['*'], fuzziness: 'AUTO', lenient: true } },
            { multi_match: { query: text, fields: ['*'], type: 'phrase', boost: 2, lenient: true } },
          ],
          minimum_should_match: 1,
        },
      },
      ...(paging.from !== undefined ? { from: paging.from } : {}),
      ...(paging.size !== undefined ? { size: paging.size } : {}),
    };
    return this.search(target, body);
  }

  async search(target: SearchTarget, body: unknown): Promise<Record<string, unknown>> {
    // Who may search is settled before the body is read (as for every route here).
    return this.run(target, (key) => this.answer(key, compileSearch(body)));
  }

  private async answer(key: string, request: SearchRequest): Promise<Record<string, unknown>> {
    const started = this.platform.clock.now().getTime();
    const result = await this.platform.search.search(key, request);
    return searchReply(result, sourceFilter(request.body._source), this.platform.clock.now().getTime() - started);
  }

  /** _msearch: NDJSON of header and body lines; each search answers on its own (an error in one is its item). */
  async msearch(target: SearchTarget, ndjson: string): Promise<Record<string, unknown>> {
    const started = this.platform.clock.now().getTime();
    // Who may search is settled before the body is read.
    const responses = await this.run(target, async (key) => {
      const out: Record<string, unknown>[] = [];
      for (const body of msearchBodies(ndjson)) {
        try {
          out.push({ ...(await this.answer(key, compileSearch(body))), status: 200 });
        } catch (e) {
          if (!(e instanceof ValidationError)) throw e;
          out.push({ error: { type: 'parsing_exception', reason: e.message, root_cause: [{ type: 'parsing_exception', reason: e.message }] }, status: 400 });
        }
      }
      return out;
    });
    return { took: this.platform.clock.now().getTime() - started, responses };
  }

  async count(target: SearchTarget, body: unknown): Promise<Record<string, unknown>> {
    const count = await this.run(target, (key) => this.platform.search.count(key, compileCount(body)));
    return { count, _shards: SHARDS };
  }

  async termsEnum(target: SearchTarget, raw: unknown): Promise<Record<string, unknown>> {
    const terms = await this.run(target, (key) => this.platform.search.termsEnum(key, termsEnumRequest(raw)));
    return { _shards: SHARDS, terms, complete: true };
  }

  async mappings(target: SearchTarget): Promise<Record<string, unknown>> {
    const properties = await this.run(target, (key) => this.platform.search.mappings(key));
    return { index: { mappings: { properties } } };
  }
}


/** The bodies of an _msearch NDJSON request: a header line ({} or {"index": "index"}) before each. */
function msearchBodies(ndjson: string): unknown[] {
  const lines = ndjson.split('\n').filter((l) => l.trim() !== '');
  if (lines.length === 0) throw new ValidationError('body: NDJSON of a header line and a body line per search; it is empty.');
  if (lines.length % 2 !== 0) throw new ValidationError(`body: line ${lines.length}: each search is a header line followed by a body line; the last body is missing.`);
  if (lines.length / 2 > MAX_MSEARCH) throw new ValidationError(`body: at most ${MAX_MSEARCH} searches per request.`);
  const parse = (line: string, n: number): unknown => {
    try {
      return JSON.parse(line);
    } catch {
      throw new ValidationError(`body: line ${n} is not JSON.`);
    }
  };
  const bodies: unknown[] = [];
  for (let i = 0; i < lines.length; i += 2) {
    const header = parse(lines[i]!, i + 1);
    if (typeof header !== 'object' || header === null || Array.isArray(header)) throw new ValidationError(`body: line ${i + 1}: a header must be a JSON object ({} or {"index": "index"}).`);
    const h = header as Record<string, unknown>;
    if (h.index !== undefined && h.index !== 'index') throw new ValidationError(`body: line ${i + 1}: index: the service has one index, "index".`);
    bodies.push(parse(lines[i + 1]!, i + 2));
  }
  return bodies;
}

function termsEnumRequest(raw: unknown): TermsEnumRequest {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new ValidationError('body: must be a JSON object with field.');
  const body = raw as Record<string, unknown>;
  for (const k of Object.keys(body)) {
    if (!['field', 'string', 'size', 'case_insensitive', 'timeout'].includes(k)) throw new ValidationError(`${k}: not supported in _terms_enum; supported: field, string, size, case_insensitive, timeout.`);
  }
  if (typeof body.field !== 'string' || !body.field) throw new ValidationError('field: required; the field whose terms to list.');
  if (body.string !== undefined && typeof body.string !== 'string') throw new ValidationError('string: must be a string (the prefix of the terms).');
  const size = body.size === undefined ? 10 : body.size;
  if (typeof size !== 'number' || !Number.isInteger(size) || size < 1 || size > 10_000) throw new ValidationError('size: must be an integer from 1 to 10000.');
  if (body.case_insensitive !== undefined && typeof body.case_insensitive !== 'boolean') throw new ValidationError('case_insensitive: must be true or false.');
  return { field: body.field, string: (body.string as string | undefined) ?? '', size, caseInsensitive: body.case_insensitive === true };
}
