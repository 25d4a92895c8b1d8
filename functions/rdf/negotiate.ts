/**
 * Choosing a serialization: by Accept header (content negotiation), by path extension or suffix,
 * or by Content-Type. All driven by the table in formats.ts; {@link negotiate} is the one choice
 * every response makes (export, describe, SPARQL endpoints, saved-query runs).
 */
import Negotiator from 'negotiator';
import { type Format, formatBySuffix, formatsFor, type QueryForm, RDF_FORMATS, type RdfFormat, type ResultFormat } from './formats.js';

/**
 * Media-range parameters other than `q` are dropped before negotiating (a client asking for
 * `application/ld+json;profile="…#expanded"` or `text/turtle;charset=utf-8` gets that format).
 */
function stripRangeParameters(accept: string): string {
  return accept
    .split(',')
    .map((range) => {
      const parts = range.split(';');
      const q = parts.slice(1).find((p) => /^\s*q\s*=/i.test(p));
      return q ? `${parts[0]!.trim()};${q.trim()}` : parts[0]!.trim();
    })
    .filter((r) => r.length > 0)
    .join(', ');
}

/**
 * The offered format the client prefers (q-values, wildcards). A missing/empty Accept header
 * gives the first offered format; `null` means nothing offered is acceptable. Canonical media
 * types win ties over aliases; `aliases: false` offers canonical types only (SPARQL results).
 */
function preferred<F extends Format>(accept: string | undefined, offered: readonly F[], aliases: boolean): F | null {
  if (offered.length === 0) return null;
  if (accept === undefined || accept.trim() === '') return offered[0]!;
  const available: string[] = [];
  const byType = new Map<string, F>();
  for (const pass of aliases ? [0, 1] : [0]) {
    for (const format of offered) {
      const types = pass === 0 ? format.mediaTypes.slice(0, 1) : format.mediaTypes.slice(1);
      for (const type of types) {
        if (byType.has(type)) continue;
        byType.set(type, format);
        available.push(type);
      }
    }
  }
  const chosen = new Negotiator({ headers: { accept: stripRangeParameters(accept) } }).mediaType(available);
  return chosen === undefined ? null : (byType.get(chosen.toLowerCase()) ?? null);
}

/**
 * The offered RDF format the client prefers, aliases included (`text/*` → Turtle, not N-Triples
 * as `text/plain`). `null` means nothing offered is acceptable (answer 406 with
 * {@link offeredMediaTypes}).
 */
export function negotiateRdfFormat(accept: string | undefined, offered: readonly RdfFormat[]): RdfFormat | null {
  return preferred(accept, offered, true);
}

/** What a response can be written in. */
export type Offer =
  /** Linked data (export, describe): these formats; an extension of one of them (`.nt`, `.nt.gz`) wins, any other falls back to Accept. */
  | { kind: 'rdf'; formats: readonly RdfFormat[] }
  /** A SPARQL query's results: the formats suiting its form; a suffix (`.csv`) wins, and is refused when it does not suit. */
  | { kind: 'results'; form: QueryForm };

/** The chosen format, or why none can be (the 406 message). */
export type Negotiated<F extends Format> = { format: F; gzip: boolean } | { refused: string };

/**
 * The format of a response from the request's Accept header and the last segment of its path
 * (`download.ttl`, `sparql.csv`, `run.srj`): the path wins, else the Accept header, else the
 * first offered format.
 */
export function negotiate(accept: string | undefined, path: string, offer: Extract<Offer, { kind: 'rdf' }>): Negotiated<RdfFormat>;
export function negotiate(accept: string | undefined, path: string, offer: Extract<Offer, { kind: 'results' }>): Negotiated<ResultFormat>;
export function negotiate(accept: string | undefined, path: string, offer: Offer): Negotiated<Format> {
  const file = path.split('/').pop() ?? '';
  if (offer.kind === 'rdf') {
    if (file.includes('.')) {
      const byPath = formatFromPath(file);
      if (byPath && offer.formats.includes(byPath.format)) return byPath;
    }
    const format = negotiateRdfFormat(accept, offer.formats);
    if (format) return { format, gzip: false };
    return {
      refused: `None of the formats in the Accept header is offered here; use one of ${offeredMediaTypes(offer.formats).join(', ')} (or a path extension such as download.ttl).`,
    };
  }
  const form = offer.form.toUpperCase();
  const suitable = formatsFor(offer.form);
  const dot = file.indexOf('.');
  if (dot >= 0) {
    const format = formatBySuffix(file.slice(dot + 1));
    if (format && format.forms.includes(offer.form)) return { format, gzip: false };
    return { refused: `A ${form} query cannot answer in "${file.slice(dot)}"; use one of ${offeredMediaTypes(suitable).join(', ')}.` };
  }
  const format = preferred(accept, suitable, false);
  if (format) return { format, gzip: false };
  return { refused: `No format in the Accept header suits a ${form} query; use one of ${offeredMediaTypes(suitable).join(', ')}.` };
}

/** Canonical media types of the offered formats (for a 406 answer or a Vary/Link listing). */
export function offeredMediaTypes(offered: readonly Format[]): string[] {
  return offered.map((f) => f.mediaTypes[0]!);
}

/**
 * `download.trig` → TriG; `download.nt.gz` → N-Triples, gzip; `x.RDF` → RDF/XML. Case-insensitive;
 * canonical extensions and aliases of the table. `null` when the name has no known extension.
 */
export function formatFromPath(fileName: string): { format: RdfFormat; gzip: boolean } | null {
  let name = fileName.toLowerCase();
  const slash = Math.max(name.lastIndexOf('/'), name.lastIndexOf('\\'));
  if (slash >= 0) name = name.slice(slash + 1);
  let gzip = false;
  if (name.endsWith('.gz')) {
    gzip = true;
    name = name.slice(0, -3);
  }
  const dot = name.lastIndexOf('.');
  if (dot < 0) return null;
  const ext = name.slice(dot + 1);
  const format = RDF_FORMATS.find((f) => f.extensions.includes(ext));
  return format ? { format, gzip } : null;
}

/** `text/turtle; charset=utf-8` → Turtle (case-insensitive, parameters ignored); `null` if unknown. */
export function formatFromMediaType(contentType: string): RdfFormat | null {
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  if (!type) return null;
  return RDF_FORMATS.find((f) => f.mediaTypes.includes(type)) ?? null;
}
