/**
 * Known failures of the W3C RDF 1.1 parser suites run through import and export (see
 * rdf11-runner.ts). rdf11.test.ts asserts that the failures are exactly these: when a cause is
 * fixed, the test fails until its entry is removed here.
 */
export interface KnownFailure {
  suite: 'rdf-n-triples' | 'rdf-n-quads' | 'rdf-turtle' | 'rdf-trig' | 'rdf-xml';
  /** mf:name of the test. */
  test: string;
  reason: string;
}

const XML_LITERAL_NAMESPACES =
  'parser limitation (oxigraph 0.5.11 RDF/XML): an rdf:parseType="Literal" value keeps every in-scope namespace ' +
  'declaration (oxigraph/oxigraph#1331 adds them on purpose) instead of being exclusive canonical XML: ' +
  'got "<br xmlns:rdf=\\"http://www.w3.org/1999/02/22-rdf-syntax-ns#\\" xmlns:eg=\\"http://example.org/\\"></br>"^^rdf:XMLLiteral, ' +
  'expected "<br></br>"^^rdf:XMLLiteral. The expected output itself is disputed upstream (w3c/rdf-xml#97, w3c/rdf-tests#325).';

export const KNOWN_FAILURES: readonly KnownFailure[] = [
  { suite: 'rdf-xml', test: 'xml-canon-test001', reason: XML_LITERAL_NAMESPACES },
  { suite: 'rdf-xml', test: 'xml-canon-test002', reason: XML_LITERAL_NAMESPACES },
];
