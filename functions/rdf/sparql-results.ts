/** Conversions of SPARQL JSON results (what the engine answers for saved queries) to other shapes. */
import { ntIri, ntQuoted, XSD_STRING } from './nt.js';

export interface SparqlJsonTerm {
  type: 'uri' | 'literal' | 'bnode' | 'typed-literal' | 'triple';
  value: string;
  'xml:lang'?: string;
  datatype?: string;
}

export interface SparqlJson {
  head: { vars?: string[] };
  results?: { bindings: Record<string, SparqlJsonTerm>[] };
  boolean?: boolean;
}

/** A term in N-Triples syntax (TSV cells). */
export function ntTerm(t: SparqlJsonTerm): string {
  if (t.type === 'uri') return ntIri(t.value);
  if (t.type === 'bnode') return `_:${t.value}`;
  const lex = ntQuoted(t.value);
  if (t['xml:lang']) return `${lex}@${t['xml:lang']}`;
  if (t.datatype && t.datatype !== XSD_STRING) return `${lex}^^${ntIri(t.datatype)}`;
  return lex;
}

/** TriplyDB's `/run` shape: one object per row, variable → plain string value. */
export const toBindingObjects = (r: SparqlJson): Record<string, string>[] =>
  (r.results?.bindings ?? []).map((row) => Object.fromEntries(Object.entries(row).map(([k, t]) => [k, t.value])));

export function toTsv(r: SparqlJson): string {
  const vars = r.head.vars ?? [];
  const rows = (r.results?.bindings ?? []).map((row) => vars.map((v) => (row[v] ? ntTerm(row[v]!) : '')).join('\t'));
  return `${[vars.map((v) => `?${v}`).join('\t'), ...rows].join('\n')}\n`;
}

const csvCell = (v: string) => (/[",\r\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v);

export function toCsv(r: SparqlJson): string {
  const vars = r.head.vars ?? [];
  const rows = (r.results?.bindings ?? []).map((row) => vars.map((v) => csvCell(row[v]?.value ?? '')).join(','));
  return `${[vars.join(','), ...rows].join('\r\n')}\r\n`;
}

const xml = (v: string) => v.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

export function toXml(r: SparqlJson): string {
  const head = `<?xml version="1.0"?>\n<sparql xmlns="http://www.w3.org/2005/sparql-results#">\n<head>${(r.head.vars ?? []).map((v) => `<variable name="${xml(v)}"/>`).join('')}</head>\n`;
  if (r.boolean !== undefined) return `${head}<boolean>${r.boolean}</boolean>\n</sparql>\n`;
  const rows = (r.results?.bindings ?? []).map((row) => {
    const cells = Object.entries(row).map(([name, t]) => {
      let value: string;
      if (t.type === 'uri') value = `<uri>${xml(t.value)}</uri>`;
      else if (t.type === 'bnode') value = `<bnode>${xml(t.value)}</bnode>`;
      else {
        const attr = t['xml:lang'] ? ` xml:lang="${xml(t['xml:lang'])}"` : t.datatype ? ` datatype="${xml(t.datatype)}"` : '';
        value = `<literal${attr}>${xml(t.value)}</literal>`;
      }
      return `<binding name="${xml(name)}">${value}</binding>`;
    });
    return `<result>${cells.join('')}</result>`;
  });
  return `${head}<results>\n${rows.join('\n')}\n</results>\n</sparql>\n`;
}
