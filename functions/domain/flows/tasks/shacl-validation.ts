/**
 * SHACL validation for the flow task: shapes and data go into in-memory n3 stores (bounded in
 * statements), rdf-validate-shacl validates, and the report is written as Turtle.
 */
import N3 from 'n3';
import SHACLValidator from 'rdf-validate-shacl';
import type { DatasetCore } from '@rdfjs/types';
import { ntQuadToRdfJs, parseNtLine, type NtQuad, type RdfJsFactoryLike } from '../../../rdf/nt.js';

/** Statements a validation reads at most, data and shapes each. */
export const SHACL_MAX_STATEMENTS = 1_000_000;

const SH = 'http://www.w3.org/ns/shacl#';

const factory = N3.DataFactory as unknown as RdfJsFactoryLike<N3.Term, N3.Quad>;

/** A store of triples (graph names dropped: the union of the graphs read is validated). */
export class TripleCollector {
  readonly store = new N3.Store();
  private count = 0;

  constructor(
    private readonly what: string,
    private readonly max = SHACL_MAX_STATEMENTS,
  ) {}

  /** Adds a canonical N-Triples line (without newline). */
  addLine(line: string): void {
    if (line) this.addQuad(parseNtLine(line));
  }

  addQuad(q: NtQuad): void {
    if (++this.count > this.max) throw new Error(`The ${this.what} hold more than ${this.max} statements, more than a SHACL validation reads.`);
    this.store.addQuad(ntQuadToRdfJs({ ...q, graph: null }, factory));
  }
}

export interface ShaclOutcome {
  conforms: boolean;
  /** Validation results of every severity. */
  violations: number;
  /** The report (sh:ValidationReport and its results) as Turtle. */
  turtle: string;
}

export async function validateShacl(shapes: N3.Store, data: N3.Store): Promise<ShaclOutcome> {
  const validator = new SHACLValidator(shapes as unknown as DatasetCore, {
    importGraph: (url) => {
      throw new Error(`The shapes import <${url.value}> (owl:imports); imports are not followed: put the shapes in one file or graph.`);
    },
  });
  const report = await validator.validate(data as unknown as DatasetCore);
  const writer = new N3.Writer({ prefixes: { sh: SH, rdf: 'http://www.w3.org/1999/02/22-rdf-syntax-ns#', xsd: 'http://www.w3.org/2001/XMLSchema#' } });
  for (const quad of report.dataset as unknown as Iterable<N3.Quad>) writer.addQuad(quad.subject, quad.predicate, quad.object);
  const turtle = await new Promise<string>((resolve, reject) => writer.end((error, result) => (error ? reject(error) : resolve(result))));
  return { conforms: report.conforms, violations: report.results.length, turtle };
}
