/**
 * CSV and TSV as RDF: a lossless, documented mapping (statemachines/README.md, "Load from URL:
 * tables and XML as RDF"). Every cell is kept as a plain string literal, empty cells as "".
 *
 * For the graph `G`:
 *
 * - `<G/table>` a `tab:Table`; `tab:column` each column.
 * - Column `n` of the header (1-based): `<G/column/n>` a `tab:Column`; `tab:columnNumber n`;
 *   `tab:header "<header text>"`; `tab:property <P>`.
 * - Data record `i` (1-based, the header not counted): `<G/row/i>` a `tab:Row`; `tab:rowNumber i`;
 *   and for every cell of column `n`: `<G/row/i> <P> "<cell>"`.
 *
 * `P` is `tab:column/<header>` (`https://w3id.org/linked-data-platform/tabular#column/<header>`),
 * the header percent-encoded (encodeURIComponent, and `~` as `%7E`). A column whose header is
 * empty, or repeats an earlier header, gets `tab:column/<header>~<n>` (`tab:column/~<n>` when
 * empty); cells beyond the header's columns get `tab:column/~<n>`. An encoded header never holds
 * `~`, so these names cannot clash with a header's. Numbers are xsd:integer; blank lines are skipped.
 */
import { parse } from 'csv-parse';
import { Readable } from 'node:stream';
import { ntIri, ntLiteral, RDF_TYPE } from './nt.js';

export const TABULAR_NS = 'https://w3id.org/linked-data-platform/tabular#';
export const XSD_INTEGER = 'http://www.w3.org/2001/XMLSchema#integer';

/** A header as it appears in a property name: percent-encoded, `~` included. */
export const encodeName = (name: string): string => encodeURIComponent(name).replace(/~/g, '%7E');

/** The column properties of a header row, in column order (see the module comment). */
export function columnProperties(headers: readonly string[]): string[] {
  const seen = new Set<string>();
  return headers.map((header, i) => {
    const n = i + 1;
    const encoded = encodeName(header);
    if (header === '') return `${TABULAR_NS}column/~${n}`;
    if (seen.has(header)) return `${TABULAR_NS}column/${encoded}~${n}`;
    seen.add(header);
    return `${TABULAR_NS}column/${encoded}`;
  });
}

/** The property of a cell beyond the header's columns. */
export const extraColumnProperty = (n: number): string => `${TABULAR_NS}column/~${n}`;

export interface TabularOptions {
  /** The graph name the node IRIs derive from (an absolute IRI). */
  graph: string;
  delimiter: ',' | '\t';
  /** Lines per yielded batch (default 2000). */
  batchSize?: number;
}

/** A malformed table (an unclosed quote, ...); the message names the line. */
export class TabularSyntaxError extends Error {
  override name = 'TabularSyntaxError';
}

const integer = (n: number) => ntLiteral(String(n), undefined, XSD_INTEGER);

/**
 * Streams a CSV (`,`, RFC 4180 quoting) or TSV (tab, no quoting: every character is data) file
 * as canonical N-Triples lines (without newline), in batches.
 */
export async function* tabularToNt(input: AsyncIterable<Buffer | Uint8Array | string>, options: TabularOptions): AsyncGenerator<string[]> {
  const batchSize = options.batchSize ?? 2000;
  const g = options.graph;
  const table = ntIri(`${g}/table`);
  const a = ntIri(RDF_TYPE);
  const tab = (local: string) => ntIri(`${TABULAR_NS}${local}`);
  const [pColumn, pColumnNumber, pHeader, pProperty, pRowNumber] = ['column', 'columnNumber', 'header', 'property', 'rowNumber'].map(tab) as [string, string, string, string, string];
  const parser = parse({
    bom: true,
    delimiter: options.delimiter,
    relax_column_count: true,
    skip_empty_lines: true,
    ...(options.delimiter === '\t' ? { quote: false } : {}),
  });
  const source = Readable.from(input, { objectMode: false });
  source.on('error', (e) => parser.destroy(e));
  source.pipe(parser);

  let batch: string[] = [`${table} ${a} ${tab('Table')} .`];
  let properties: string[] | null = null;
  let row = 0;
  try {
    for await (const record of parser as AsyncIterable<string[]>) {
      if (properties === null) {
        properties = columnProperties(record);
        record.forEach((header, i) => {
          const column = ntIri(`${g}/column/${i + 1}`);
          batch.push(
            `${table} ${pColumn} ${column} .`,
            `${column} ${a} ${tab('Column')} .`,
            `${column} ${pColumnNumber} ${integer(i + 1)} .`,
            `${column} ${pHeader} ${ntLiteral(header)} .`,
            `${column} ${pProperty} ${ntIri(properties![i]!)} .`,
          );
        });
      } else {
        row++;
        const subject = ntIri(`${g}/row/${row}`);
        batch.push(`${subject} ${a} ${tab('Row')} .`, `${subject} ${pRowNumber} ${integer(row)} .`);
        for (let i = 0; i < record.length; i++) {
          const property = i < properties.length ? properties[i]! : extraColumnProperty(i + 1);
          batch.push(`${subject} ${ntIri(property)} ${ntLiteral(record[i]!)} .`);
        }
      }
      if (batch.length >= batchSize) {
        yield batch;
        batch = [];
      }
    }
  } catch (e) {
    const error = e as Error & { code?: string };
    if (typeof error.code === 'string' && error.code.startsWith('CSV_')) throw new TabularSyntaxError(error.message);
    throw e;
  } finally {
    source.destroy();
  }
  if (batch.length > 0) yield batch;
}
