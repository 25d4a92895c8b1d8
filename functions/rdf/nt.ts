/**
 * Terms and statements as canonical N-Triples text: the storage representation of graph data
 * (one gzip blob of `s p o .` lines per graph; the graph name lives in metadata).
 *
 * Canonical form written here (RDF 1.1 N-Triples §"Canonical N-Triples"):
 *   IRIs          `<iri>`, characters outside the IRIREF set (U+0000–U+0020 `<>"{}|^`\`) as `\uXXXX`
 *   blank nodes   `_:label`, label in [A-Za-z0-9] (parsed labels are prefixed and sanitized)
 *   literals      `"lex"`, `"lex"@lang`, `"lex"^^<dt>`; only `\\ \" \n \r` escaped; xsd:string omitted;
 *                 language tags lower-cased; RDF 1.2 base direction kept as `@lang--ltr`
 *   statements    `s p o .` (N-Triples) and `s p o g .` (N-Quads), single spaces, `\n` terminated
 *
 * RDF 1.2 triple terms are not supported (converters throw {@link UnsupportedTermError}).
 */

/** One statement, each term in canonical N-Triples syntax; `graph` null = default graph. */
export interface NtQuad {
  subject: string;
  predicate: string;
  object: string;
  graph: string | null;
}

export const XSD_STRING = 'http://www.w3.org/2001/XMLSchema#string';
export const RDF_LANG_STRING = 'http://www.w3.org/1999/02/22-rdf-syntax-ns#langString';
export const RDF_DIR_LANG_STRING = 'http://www.w3.org/1999/02/22-rdf-syntax-ns#dirLangString';
export const RDF_TYPE = 'http://www.w3.org/1999/02/22-rdf-syntax-ns#type';

/** A term that has no canonical N-Triples form here (RDF 1.2 triple terms, relative IRIs, ...). */
export class UnsupportedTermError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnsupportedTermError';
  }
}

const ABSOLUTE_IRI = /^[A-Za-z][A-Za-z0-9+.-]*:/;
// eslint-disable-next-line no-control-regex
const PLAIN_ABSOLUTE_IRI = /^[A-Za-z][A-Za-z0-9+.-]*:[^\x00-\x20<>"{}|^`\\]*$/;

/** Starts with `scheme:` (the first character is known to be a letter). */
function hasScheme(iri: string): boolean {
  for (let i = 1; i < iri.length; i++) {
    const c = iri.charCodeAt(i);
    if (c === 58) return true;
    if (!((c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 43 || c === 45 || c === 46)) return false;
  }
  return false;
}

/** `<iri>` in canonical form, rejecting relative IRIs (a parser without base leaves them relative). */
export function ntAbsoluteIri(iri: string): string {
  if (PLAIN_ABSOLUTE_IRI.test(iri)) return `<${iri}>`;
  if (!ABSOLUTE_IRI.test(iri)) {
    throw new UnsupportedTermError(`relative IRI <${iri}> cannot be resolved (no base IRI)`);
  }
  return ntIri(iri);
}

// ---------------------------------------------------------------------------------------------
// Escaping

// eslint-disable-next-line no-control-regex
const IRI_NEEDS_ESCAPE = /[\x00-\x20<>"{}|^`\\]/;
// eslint-disable-next-line no-control-regex
const IRI_ESCAPE_ALL = /[\x00-\x20<>"{}|^`\\]/g;
const LITERAL_NEEDS_ESCAPE = /["\\\n\r]/;
const LITERAL_ESCAPE_ALL = /["\\\n\r]/g;
/** Finds the next character that needs escaping in a literal, or its closing quote. */
const LITERAL_SCAN = /["\\\n\r]/g;

const hex4 = (code: number): string => code.toString(16).toUpperCase().padStart(4, '0');

function escapeIriChar(c: string): string {
  return `\\u${hex4(c.charCodeAt(0))}`;
}
function escapeLiteralChar(c: string): string {
  switch (c) {
    case '"': return '\\"';
    case '\\': return '\\\\';
    case '\n': return '\\n';
    default: return '\\r';
  }
}

/**
 * `<iri>` in canonical form: the platform's one IRI escaper, for every IRI written as N-Triples,
 * Turtle or SPARQL text (storage, serializers, TSV results, the external store's updates).
 */
export function ntIri(iri: string): string {
  return IRI_NEEDS_ESCAPE.test(iri) ? `<${iri.replace(IRI_ESCAPE_ALL, escapeIriChar)}>` : `<${iri}>`;
}

/** The quoted part `"lex"` of a literal in canonical form. */
export function ntQuoted(lex: string): string {
  return LITERAL_NEEDS_ESCAPE.test(lex) ? `"${lex.replace(LITERAL_ESCAPE_ALL, escapeLiteralChar)}"` : `"${lex}"`;
}

/**
 * A literal in canonical form. `language` may carry an RDF 1.2 direction as `en--ltr`.
 * A datatype of xsd:string (or none) is omitted; with a language the datatype is ignored.
 */
export function ntLiteral(lex: string, language?: string, datatype?: string): string {
  if (language) return `${ntQuoted(lex)}@${language.toLowerCase()}`;
  if (!datatype || datatype === XSD_STRING) return ntQuoted(lex);
  return `${ntQuoted(lex)}^^${ntIri(datatype)}`;
}

// ---------------------------------------------------------------------------------------------
// Blank node labels

const PLAIN_LABEL = /^[A-PR-Za-z0-9]+$/;
const PREFIX_OK = /^[A-Za-z0-9]*$/;

/**
 * Injective mapping of any label to [A-Za-z0-9]+: letters and digits other than `Q` stay,
 * every other UTF-16 unit becomes `Q` + 4 upper-case hex digits (so `Q` itself is `Q0051`,
 * `a-b` is `aQ002Db`). The output never contains `Qg` or `Qh`, which {@link anonymousLabel}
 * uses for parser-generated nodes.
 */
export function sanitizeBlankLabel(label: string): string {
  if (PLAIN_LABEL.test(label)) return label;
  let out = '';
  for (let i = 0; i < label.length; i++) {
    const c = label.charCodeAt(i);
    if ((c >= 48 && c <= 57) || (c >= 65 && c <= 90 && c !== 81) || (c >= 97 && c <= 122)) out += label[i];
    else out += `Q${hex4(c)}`;
  }
  return out || 'Q0000';
}

/**
 * Label for a node the parser invented (Turtle `[]`, collections): disjoint from sanitized labels.
 * N3's `n3-<n>` becomes `Qg<n>`.
 */
export function anonymousLabel(generated: string): string {
  return /^n3-\d+$/.test(generated) ? `Qg${generated.slice(3)}` : `Qh${sanitizeBlankLabel(generated)}`;
}

export function assertBlankNodePrefix(prefix: string): void {
  if (!PREFIX_OK.test(prefix)) throw new Error(`blankNodePrefix must match [A-Za-z0-9]*, got ${JSON.stringify(prefix)}`);
}

// ---------------------------------------------------------------------------------------------
// RDF/JS terms → canonical text

/** Minimal RDF/JS term shape (N3, oxigraph and other RDF/JS implementations). */
export interface RdfJsTermLike {
  termType: string;
  value: string;
  language?: string;
  direction?: string;
  datatype?: { value: string };
}
export interface RdfJsQuadLike {
  subject: RdfJsTermLike;
  predicate: RdfJsTermLike;
  object: RdfJsTermLike;
  graph: RdfJsTermLike;
}

function literalFromParts(lex: string, language: string, direction: string | undefined, datatype: string): string {
  if (language) return `${ntQuoted(lex)}@${language.toLowerCase()}${direction ? `--${direction.toLowerCase()}` : ''}`;
  if (datatype === XSD_STRING || datatype === '') return ntQuoted(lex);
  if (datatype === RDF_LANG_STRING || datatype === RDF_DIR_LANG_STRING) {
    throw new UnsupportedTermError(`a literal with datatype <${datatype}> needs a language tag`);
  }
  return `${ntQuoted(lex)}^^${ntAbsoluteIri(datatype)}`;
}

/**
 * Converter for terms of any RDF/JS implementation (used for oxigraph's parser output).
 * Every blank node label is rewritten to `<blankNodePrefix><sanitized label>`.
 */
export function rdfJsTermToNt(term: RdfJsTermLike, blankNodePrefix = ''): string {
  switch (term.termType) {
    case 'NamedNode': return ntIri(term.value);
    case 'BlankNode': return `_:${blankNodePrefix}${sanitizeBlankLabel(term.value)}`;
    case 'Literal': {
      const language = term.language ?? '';
      return literalFromParts(term.value, language, language ? term.direction : undefined, language ? '' : term.datatype?.value ?? '');
    }
    case 'Quad': throw new UnsupportedTermError('RDF 1.2 triple terms are not supported');
    default: throw new UnsupportedTermError(`unsupported term type ${term.termType}`);
  }
}

/** RDF/JS quad → NtQuad (default graph → null). */
export function rdfJsQuadToNt(q: RdfJsQuadLike, blankNodePrefix = ''): NtQuad {
  const g = q.graph;
  return {
    subject: rdfJsTermToNt(q.subject, blankNodePrefix),
    predicate: rdfJsTermToNt(q.predicate, blankNodePrefix),
    object: rdfJsTermToNt(q.object, blankNodePrefix),
    graph: g.termType === 'DefaultGraph' ? null : rdfJsTermToNt(g, blankNodePrefix),
  };
}

/**
 * Fast converter for terms made by N3's DataFactory, reading N3's internal `id`
 * (IRI: the IRI; blank node: `_:label`; literal: `"lex"`, `"lex"@lang[--dir]`, `"lex"^^dt`).
 *
 * `n3NamedPrefix` is the `blankNodePrefix` given to N3's parser: labels written in the file
 * arrive as `_:<n3NamedPrefix><label>`; any other blank node was generated by N3 (`[]`, lists).
 */
export function makeN3TermConverter(blankNodePrefix: string, n3NamedPrefix: string): (term: RdfJsTermLike & { id?: string }) => string {
  assertBlankNodePrefix(blankNodePrefix);
  const named = n3NamedPrefix.length;
  // No cache: a label map would grow with the number of blank nodes in the file.
  const blank = (value: string): string =>
    value.startsWith(n3NamedPrefix)
      ? `_:${blankNodePrefix}${sanitizeBlankLabel(value.slice(named))}`
      : `_:${blankNodePrefix}${anonymousLabel(value)}`;
  const other = (term: RdfJsTermLike): string => {
    switch (term.termType) {
      case 'NamedNode': return ntAbsoluteIri(term.value);
      case 'BlankNode': return blank(term.value);
      case 'Literal': return rdfJsTermToNt(term, blankNodePrefix);
      case 'Quad': throw new UnsupportedTermError('RDF 1.2 triple terms are not supported');
      default: throw new UnsupportedTermError(`unsupported term type ${term.termType}`);
    }
  };
  const datatypeSuffixes = new Map<string, string>();
  return (term) => {
    // Dispatch on the id's first character (cheaper than the polymorphic termType getter):
    // `"` literal, `_:` blank node, a letter an (absolute) IRI; anything else the slow path.
    const id = term.id;
    if (typeof id !== 'string') return other(term);
    const c = id.charCodeAt(0);
    if (c === 34 /* " */) {
      const end = id.lastIndexOf('"');
      // The lexical form needs no escape when the first of `" \ \n \r` after the opening quote is
      // the closing one: then N3's `"lex"` part is already canonical and is used as it is.
      LITERAL_SCAN.lastIndex = 1;
      const clean = LITERAL_SCAN.exec(id)!.index === end;
      if (end === id.length - 1) return clean ? id : ntQuoted(id.substring(1, end));
      if (id.charCodeAt(end + 1) === 64 /* @ */) return clean ? id : `${ntQuoted(id.substring(1, end))}${id.substring(end + 1)}`; // N3 lower-cases
      const datatype = id.substring(end + 3);
      // A file uses few datatypes: remember each one's suffix (bounded).
      let suffix = datatypeSuffixes.get(datatype);
      if (suffix === undefined) {
        suffix = literalFromParts('', '', undefined, datatype).substring(2);
        if (datatypeSuffixes.size >= 1000) datatypeSuffixes.clear();
        datatypeSuffixes.set(datatype, suffix);
      }
      return clean ? `${id.substring(0, end + 1)}${suffix}` : `${ntQuoted(id.substring(1, end))}${suffix}`;
    }
    // N3's lexer already rejects IRIs with characters outside IRIREF (also after \u unescaping),
    // so only absoluteness is left to check (without a base, N3 keeps relative IRIs as they are).
    if ((c >= 97 && c <= 122) || (c >= 65 && c <= 90)) return hasScheme(id) ? `<${id}>` : ntAbsoluteIri(id);
    return other(term);
  };
}

// ---------------------------------------------------------------------------------------------
// Lines

/** `s p o .\n` (graph dropped). */
export function ntLine(q: NtQuad): string {
  return `${q.subject} ${q.predicate} ${q.object} .\n`;
}

/** `s p o g .\n`, or `s p o .\n` for the default graph. */
export function nqLine(q: NtQuad): string {
  return q.graph === null
    ? `${q.subject} ${q.predicate} ${q.object} .\n`
    : `${q.subject} ${q.predicate} ${q.object} ${q.graph} .\n`;
}

function malformed(line: string, why: string): never {
  const shown = line.length > 200 ? `${line.slice(0, 200)}…` : line;
  throw new Error(`malformed canonical N-Triples line (${why}): ${shown}`);
}

/** End (exclusive) of the term starting at `start` (which must not be a space). */
function termEnd(line: string, start: number): number {
  const c = line.charCodeAt(start);
  if (c === 60 /* < */ || c === 95 /* _ */) {
    const end = line.indexOf(' ', start);
    return end < 0 ? line.length : end;
  }
  if (c === 34 /* " */) {
    let q = start;
    for (;;) {
      q = line.indexOf('"', q + 1);
      if (q < 0) malformed(line, 'unterminated literal');
      let backslashes = 0;
      for (let k = q - 1; line.charCodeAt(k) === 92; k--) backslashes++;
      if ((backslashes & 1) === 0) break;
    }
    const end = line.indexOf(' ', q + 1);
    return end < 0 ? line.length : end;
  }
  return malformed(line, `unexpected character at ${start}`);
}

/**
 * Split one canonical line `s p o [g] .` (as written by {@link ntLine}/{@link nqLine}) into its
 * terms. Meant for lines this platform wrote: it checks the shape, not every character.
 * A trailing `\n`/`\r\n` is tolerated.
 */
export function parseNtLine(line: string): NtQuad {
  let len = line.length;
  if (len > 0 && line.charCodeAt(len - 1) === 10) len--;
  if (len > 0 && line.charCodeAt(len - 1) === 13) len--;
  if (len < 9 || line.charCodeAt(len - 1) !== 46 /* . */ || line.charCodeAt(len - 2) !== 32) malformed(line, 'no final " ."');
  const body = len === line.length ? line : line.slice(0, len);
  const sEnd = body.indexOf(' ');
  const sc = body.charCodeAt(0);
  if (sEnd <= 0 || (sc !== 60 && sc !== 95)) malformed(line, 'bad subject');
  const pEnd = body.indexOf(' ', sEnd + 1);
  if (pEnd < 0 || body.charCodeAt(sEnd + 1) !== 60) malformed(line, 'bad predicate');
  const oStart = pEnd + 1;
  const oEnd = termEnd(body, oStart);
  if (oEnd >= len - 1) malformed(line, 'missing final " ."');
  const subject = body.slice(0, sEnd);
  const predicate = body.slice(sEnd + 1, pEnd);
  const object = body.slice(oStart, oEnd);
  if (oEnd === len - 2) return { subject, predicate, object, graph: null };
  const gStart = oEnd + 1;
  const gc = body.charCodeAt(gStart);
  const gEnd = body.indexOf(' ', gStart);
  if ((gc !== 60 && gc !== 95) || gEnd !== len - 2) malformed(line, 'bad graph');
  return { subject, predicate, object, graph: body.slice(gStart, gEnd) };
}

/**
 * Split text of complete canonical lines into quads (blank lines skipped). `graph` overrides /
 * supplies the graph (blobs hold N-Triples lines; their graph name is in metadata).
 */
export function parseNtLines(text: string, graph?: string | null, out: NtQuad[] = []): NtQuad[] {
  let pos = 0;
  const n = text.length;
  while (pos < n) {
    let nl = text.indexOf('\n', pos);
    if (nl < 0) nl = n;
    if (nl > pos) {
      const q = parseNtLine(text.slice(pos, nl));
      if (graph !== undefined) q.graph = graph;
      out.push(q);
    }
    pos = nl + 1;
  }
  return out;
}

/**
 * Stream canonical lines (e.g. a decompressed graph blob, any chunking) as NtQuad batches.
 * `graph` (when given) is set on every quad.
 */
export async function* ntLinesToBatches(
  chunks: AsyncIterable<string | Uint8Array>,
  graph?: string | null,
  batchSize = 1000,
): AsyncGenerator<NtQuad[]> {
  const decoder = new TextDecoder('utf-8');
  let rest = '';
  let batch: NtQuad[] = [];
  for await (const chunk of chunks) {
    const text = rest + (typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true }));
    const cut = text.lastIndexOf('\n') + 1;
    rest = text.slice(cut);
    if (cut === 0) continue;
    parseNtLines(text.slice(0, cut), graph, batch);
    while (batch.length >= batchSize) {
      yield batch.slice(0, batchSize);
      batch = batch.slice(batchSize);
    }
  }
  rest += decoder.decode();
  if (rest.length > 0) parseNtLines(rest, graph, batch);
  if (batch.length > 0) yield batch;
}

/**
 * Canonical N-Triples text (complete lines) → N-Quads text in `graph` (null: unchanged).
 * A raw `\n` only ends lines in canonical form, so ` .\n` only occurs at line ends.
 */
export function ntTextToNq(text: string, graph: string | null): string {
  return graph === null ? text : text.replaceAll(' .\n', ` ${graph} .\n`);
}

// ---------------------------------------------------------------------------------------------
// Canonical text → values / RDF/JS terms

const UCHAR = /\\u([0-9A-Fa-f]{4})|\\U([0-9A-Fa-f]{8})/g;
const ECHAR_OR_UCHAR = /\\(?:u([0-9A-Fa-f]{4})|U([0-9A-Fa-f]{8})|([tbnrf"'\\]))/g;

function ucharReplace(_m: string, u4?: string, u8?: string, e?: string): string {
  if (u4 !== undefined) return String.fromCharCode(parseInt(u4, 16));
  if (u8 !== undefined) return String.fromCodePoint(parseInt(u8, 16));
  switch (e) {
    case 'n': return '\n';
    case 'r': return '\r';
    case 't': return '\t';
    case 'b': return '\b';
    case 'f': return '\f';
    default: return e!;
  }
}

/** `<iri>` → iri (\u escapes decoded). */
export function ntIriValue(term: string): string {
  const inner = term.slice(1, -1);
  return inner.includes('\\') ? inner.replace(UCHAR, (m, a, b) => ucharReplace(m, a, b)) : inner;
}

export interface NtLiteralParts {
  value: string;
  /** Lower-case language tag without direction; '' if none. */
  language: string;
  /** RDF 1.2 base direction; '' if none. */
  direction: '' | 'ltr' | 'rtl';
  /** Datatype IRI (xsd:string, rdf:langString or rdf:dirLangString when implied). */
  datatype: string;
}

/** Decompose a canonical literal term. */
export function ntLiteralParts(term: string): NtLiteralParts {
  const end = term.lastIndexOf('"');
  const raw = term.slice(1, end);
  const value = raw.includes('\\') ? raw.replace(ECHAR_OR_UCHAR, ucharReplace) : raw;
  if (end === term.length - 1) return { value, language: '', direction: '', datatype: XSD_STRING };
  if (term.charCodeAt(end + 1) === 64) {
    const tag = term.slice(end + 2);
    const dd = tag.indexOf('--');
    if (dd < 0) return { value, language: tag, direction: '', datatype: RDF_LANG_STRING };
    return { value, language: tag.slice(0, dd), direction: tag.slice(dd + 2) as 'ltr' | 'rtl', datatype: RDF_DIR_LANG_STRING };
  }
  return { value, language: '', direction: '', datatype: ntIriValue(term.slice(end + 3)) };
}

/** Minimal RDF/JS DataFactory shape (N3.DataFactory, oxigraph, rdf-data-factory). */
export interface RdfJsFactoryLike<T, Q> {
  namedNode(iri: string): T;
  blankNode(label?: string): T;
  literal(value: string, languageOrDatatype?: string | T | { language: string; direction?: 'ltr' | 'rtl' }): T;
  defaultGraph(): T;
  quad(s: T, p: T, o: T, g?: T): Q;
}

/** Canonical term text → RDF/JS term of `factory`. */
export function ntTermToRdfJs<T, Q>(term: string, factory: RdfJsFactoryLike<T, Q>): T {
  const c = term.charCodeAt(0);
  if (c === 60) return factory.namedNode(ntIriValue(term));
  if (c === 95) return factory.blankNode(term.slice(2));
  if (c === 34) {
    const { value, language, direction, datatype } = ntLiteralParts(term);
    if (direction) return factory.literal(value, { language, direction });
    if (language) return factory.literal(value, language);
    return factory.literal(value, datatype === XSD_STRING ? undefined : factory.namedNode(datatype));
  }
  throw new Error(`not a canonical N-Triples term: ${term.slice(0, 100)}`);
}

export function ntQuadToRdfJs<T, Q>(q: NtQuad, factory: RdfJsFactoryLike<T, Q>): Q {
  return factory.quad(
    ntTermToRdfJs(q.subject, factory),
    ntTermToRdfJs(q.predicate, factory),
    ntTermToRdfJs(q.object, factory),
    q.graph === null ? factory.defaultGraph() : ntTermToRdfJs(q.graph, factory),
  );
}
