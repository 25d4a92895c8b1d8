/**
 * Documents of a search index from a snapshot's statements: one per subject (all graphs merged),
 * `_id` the subject IRI, each property under its IRI with every `.` written as a space, values
 * always arrays. IRIs are their IRI strings; literals their values: xsd numbers as numbers,
 * xsd:boolean as booleans, dates (xsd:date, xsd:dateTime, xsd:gYear..., and ISO-looking strings as
 * Elasticsearch's date detection finds them) as their ISO text, which the field's `date` type makes
 * ranges and sorts compare as instants; language-tagged strings as their text (searchable in any
 * language; the tag is not kept). A value the mapping says is a number or a date but is not stays
 * in the document and is left out of ranges (Elasticsearch's ignore_malformed).
 *
 * Blank nodes: a blank-node subject is its own document with `_id` `_:label`, and a blank-node
 * object is its label. Labels are per snapshot (they change on import), so link to IRIs, not to them.
 */
import { ntIriValue, ntLiteralParts, parseNtLine } from '../../rdf/nt.js';
import type { FieldType, FieldValue, SearchDocument, SearchMappings } from '../../ports/search-index.js';
import { fieldName } from './search-config.js';

const XSD = 'http://www.w3.org/2001/XMLSchema#';
const NUMERIC = new Set(
  ['integer', 'decimal', 'double', 'float', 'long', 'int', 'short', 'byte', 'nonNegativeInteger', 'positiveInteger', 'negativeInteger', 'nonPositiveInteger', 'unsignedLong', 'unsignedInt', 'unsignedShort', 'unsignedByte'].map(
    (t) => XSD + t,
  ),
);
const DATES = new Set(['date', 'dateTime', 'dateTimeStamp', 'gYear', 'gYearMonth'].map((t) => XSD + t));
/** Elasticsearch's default dynamic date formats: strict_date_optional_time and yyyy/MM/dd. */
const DATE_LIKE = /^(\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?|\d{4}\/\d{2}\/\d{2})$/;

export const isNumericType = (t: FieldType): boolean => t !== 'text' && t !== 'keyword' && t !== 'date' && t !== 'boolean';

/** Epoch milliseconds of a date value, or NaN. Years alone and year-months count from their start. */
export function dateValue(value: FieldValue): number {
  if (typeof value === 'number') return value;
  if (typeof value !== 'string') return NaN;
  const s = value.trim();
  if (/^-?\d{4}$/.test(s)) return Date.UTC(Number(s), 0, 1);
  if (/^\d{4}-\d{2}$/.test(s)) return Date.UTC(Number(s.slice(0, 4)), Number(s.slice(5)) - 1, 1);
  if (/^\d{4}\/\d{2}\/\d{2}$/.test(s)) return Date.parse(s.replaceAll('/', '-'));
  // A date without a zone is UTC (Elasticsearch's default), also with a time.
  const zoned = /T\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/.test(s) ? `${s}Z` : s;
  return Date.parse(zoned);
}

interface Term {
  value: FieldValue;
  kind: 'number' | 'boolean' | 'date' | 'string';
}

function termValue(object: string): Term {
  const c = object.charCodeAt(0);
  if (c === 60) return { value: ntIriValue(object), kind: 'string' };
  if (c === 95) return { value: object, kind: 'string' };
  const { value, datatype } = ntLiteralParts(object);
  if (NUMERIC.has(datatype)) {
    const n = Number(value);
    if (Number.isFinite(n)) return { value: n, kind: 'number' };
  }
  if (datatype === `${XSD}boolean`) return { value: value === 'true' || value === '1', kind: 'boolean' };
  if (DATES.has(datatype) || (datatype === `${XSD}string` && DATE_LIKE.test(value) && !Number.isNaN(dateValue(value)))) return { value, kind: 'date' };
  return { value, kind: 'string' };
}

const DETECTED: Record<Term['kind'], FieldType> = { number: 'double', boolean: 'boolean', date: 'date', string: 'text' };

/** Documents being collected from a snapshot's lines, with the field types they show. */
export class DocumentCollector {
  private readonly docs = new Map<string, Record<string, FieldValue[]>>();
  /** Field → type: the mapping's, else the first value's (as Elasticsearch's dynamic mapping). */
  readonly types: SearchMappings;

  constructor(mappings: SearchMappings) {
    this.types = { ...mappings };
  }

  get size(): number {
    return this.docs.size;
  }

  /** Adds complete canonical N-Triples/N-Quads lines. */
  addLines(text: string): void {
    let pos = 0;
    while (pos < text.length) {
      let nl = text.indexOf('\n', pos);
      if (nl < 0) nl = text.length;
      if (nl > pos) this.addLine(text.slice(pos, nl));
      pos = nl + 1;
    }
  }

  private addLine(line: string): void {
    const q = parseNtLine(line);
    const id = q.subject.charCodeAt(0) === 60 ? ntIriValue(q.subject) : q.subject;
    const field = fieldName(ntIriValue(q.predicate));
    const term = termValue(q.object);
    let doc = this.docs.get(id);
    if (!doc) this.docs.set(id, (doc = {}));
    const values = doc[field] ?? (doc[field] = []);
    if (values.includes(term.value)) return;
    values.push(term.value);
    if (!this.types[field]) this.types[field] = { type: DETECTED[term.kind] };
  }

  *documents(): Generator<SearchDocument> {
    for (const [_id, fields] of this.docs) yield { _id, fields };
  }
}

/** Documents of a snapshot given as N-Quads text chunks (GraphCatalog.nquads), for SearchIndexes.build. */
export async function collectDocuments(chunks: AsyncIterable<string>, mappings: SearchMappings): Promise<DocumentCollector> {
  const collector = new DocumentCollector(mappings);
  let rest = '';
  for await (const chunk of chunks) {
    const text = rest + chunk;
    const cut = text.lastIndexOf('\n') + 1;
    rest = text.slice(cut);
    if (cut > 0) collector.addLines(text.slice(0, cut));
  }
  if (rest) collector.addLines(rest);
  return collector;
}
