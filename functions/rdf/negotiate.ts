/**
 * Choosing a serialization: by Accept header (content negotiation), by path extension, or by
 * Content-Type. All driven by the table in formats.ts.
 */
import Negotiator from 'negotiator';
import { RDF_FORMATS, type RdfFormat } from './formats.js';

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
 * gives the first offered format; `null` means nothing offered is acceptable (answer 406 with
 * {@link offeredMediaTypes}). Canonical media types win ties over aliases (`text/*` → Turtle,
 * not N-Triples as `text/plain`).
 */
export function negotiateRdfFormat(accept: string | undefined, offered: readonly RdfFormat[]): RdfFormat | null {
  if (offered.length === 0) return null;
  if (accept === undefined || accept.trim() === '') return offered[0]!;
  const available: string[] = [];
  const byType = new Map<string, RdfFormat>();
  for (const pass of [0, 1]) {
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

/** Canonical media types of the offered formats (for a 406 answer or a Vary/Link listing). */
export function offeredMediaTypes(offered: readonly RdfFormat[]): string[] {
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
