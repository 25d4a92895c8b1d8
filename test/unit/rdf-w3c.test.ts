/**
 * Parser-level check against the W3C RDF 1.1 test suites (the HTTP conformance runner comes
 * separately): a few named spot checks, then every test of each manifest.
 * Eval tests compare with the expected N-Triples / N-Quads up to blank node renaming.
 */
import { createReadStream, existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { formatByName, type RdfFormatName } from '../../functions/rdf/formats.js';
import { isomorphic, sortedNQuads } from '../../functions/rdf/isomorphic.js';
import { ntIriValue, type NtQuad } from '../../functions/rdf/nt.js';
import { parseRdf, RdfSyntaxError } from '../../functions/rdf/parse.js';

const ROOT = '/work/shared/conformance/rdf-tests/rdf/rdf11';
const BASE = 'https://w3c.github.io/rdf-tests/rdf/rdf11';
const MF = 'http://www.w3.org/2001/sw/DataAccess/tests/test-manifest#';
const RDF_TYPE = '<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>';

const SUITES: { suite: string; format: RdfFormatName; result: RdfFormatName; expectedFailures: string[] }[] = [
  { suite: 'rdf-turtle', format: 'turtle', result: 'ntriples', expectedFailures: [] },
  { suite: 'rdf-trig', format: 'trig', result: 'nquads', expectedFailures: [] },
  { suite: 'rdf-n-triples', format: 'ntriples', result: 'ntriples', expectedFailures: [] },
  { suite: 'rdf-n-quads', format: 'nquads', result: 'nquads', expectedFailures: [] },
  // oxigraph does not canonicalize rdf:XMLLiteral (exclusive XML canonicalization)
  { suite: 'rdf-xml', format: 'rdfxml', result: 'ntriples', expectedFailures: ['xml-canon/test001.rdf', 'xml-canon/test002.rdf'] },
];

async function parseFile(suite: string, file: string, format: RdfFormatName): Promise<NtQuad[]> {
  const out: NtQuad[] = [];
  for await (const batch of parseRdf(createReadStream(`${ROOT}/${suite}/${file}`), {
    format: formatByName(format),
    baseIRI: `${BASE}/${suite}/${file}`,
    blankNodePrefix: 'w3c',
    fileName: file,
  })) out.push(...batch);
  return out;
}

interface W3cTest { type: string; action: string; result?: string }

async function manifest(suite: string): Promise<W3cTest[]> {
  const quads = await parseFile(suite, 'manifest.ttl', 'turtle');
  const bySubject = new Map<string, Map<string, string>>();
  for (const q of quads) {
    if (!bySubject.has(q.subject)) bySubject.set(q.subject, new Map());
    bySubject.get(q.subject)!.set(q.predicate, q.object);
  }
  const prefix = `${BASE}/${suite}/`;
  const tests: W3cTest[] = [];
  for (const props of bySubject.values()) {
    const type = props.get(RDF_TYPE);
    const action = props.get(`<${MF}action>`);
    if (!type || !action) continue;
    const result = props.get(`<${MF}result>`);
    tests.push({
      type: type.replace(/^.*#/, '').replace(/>$/, ''),
      action: ntIriValue(action).slice(prefix.length),
      result: result ? ntIriValue(result).slice(prefix.length) : undefined,
    });
  }
  return tests;
}

/** null when the test passes, else why not. */
async function run(suite: (typeof SUITES)[number], test: W3cTest): Promise<string | null> {
  const negative = /Negative/.test(test.type);
  let actual: NtQuad[];
  try {
    actual = await parseFile(suite.suite, test.action, suite.format);
  } catch (e) {
    if (negative) return e instanceof RdfSyntaxError ? null : `failed, but not with RdfSyntaxError: ${String(e)}`;
    return `unexpected error: ${(e as Error).message}`;
  }
  if (negative) return 'parsed, but should have failed';
  if (/Eval/.test(test.type) && test.result) {
    const expected = await parseFile(suite.suite, test.result, suite.result);
    if (!isomorphic(actual, expected)) return `not isomorphic:\n${sortedNQuads(actual).join('\n')}\n--- expected ---\n${sortedNQuads(expected).join('\n')}`;
  }
  return null;
}

describe.skipIf(!existsSync(ROOT))('W3C RDF 1.1 test suites (parser level)', () => {
  const turtle = SUITES[0]!;
  const spot: W3cTest[] = [
    { type: 'TestTurtleEval', action: 'IRI_with_all_punctuation.ttl', result: 'IRI_with_all_punctuation.nt' },
    { type: 'TestTurtleEval', action: 'IRI-resolution-01.ttl', result: 'IRI-resolution-01.nt' },
    { type: 'TestTurtleEval', action: 'LITERAL1_all_controls.ttl', result: 'LITERAL1_all_controls.nt' },
    { type: 'TestTurtleEval', action: 'LITERAL_LONG2_with_REVERSE_SOLIDUS.ttl', result: 'LITERAL_LONG2_with_REVERSE_SOLIDUS.nt' },
    { type: 'TestTurtleEval', action: 'localName_with_assigned_nfc_PN_CHARS_BASE_character_boundaries.ttl', result: 'localName_with_assigned_nfc_PN_CHARS_BASE_character_boundaries.nt' },
    { type: 'TestTurtleEval', action: 'turtle-subm-27.ttl', result: 'turtle-subm-27.nt' },
    { type: 'TestTurtleNegativeSyntax', action: 'turtle-syntax-bad-uri-01.ttl' },
    { type: 'TestTurtleNegativeSyntax', action: 'turtle-syntax-bad-esc-01.ttl' },
  ];
  for (const test of spot) {
    it.skipIf(!existsSync(`${ROOT}/${turtle.suite}/${test.action}`))(`rdf-turtle spot check: ${test.action}`, async () => {
      expect(await run(turtle, test)).toBeNull();
    });
  }

  for (const suite of SUITES) {
    it(`${suite.suite}: every test of the manifest`, async () => {
      const tests = await manifest(suite.suite);
      expect(tests.length).toBeGreaterThan(50);
      const failures: string[] = [];
      for (const test of tests) {
        const why = await run(suite, test);
        if (why !== null && !suite.expectedFailures.includes(test.action)) failures.push(`${test.type} ${test.action}: ${why.slice(0, 2000)}`);
      }
      expect(failures).toEqual([]);
    });
  }
});
