/** The linear pre-scan every untrusted SPARQL text passes before a parser sees it. */
import { describe, expect, it } from 'vitest';
import { MAX_SPARQL_NESTING, sparqlLimitProblem, withoutLiterals } from '../../functions/rdf/sparql-prescan.js';

const deep = (n: number) => `${'('.repeat(n)}1${')'.repeat(n)}`;

describe('the SPARQL pre-scan', () => {
  it('counts brackets hidden behind an escaped local name (`ex:a\\#` is a name, not a comment)', () => {
    expect(sparqlLimitProblem(`SELECT * WHERE { ?s ex:a\\# ?o FILTER(${deep(MAX_SPARQL_NESTING + 5)}) }`)).toMatch(/nests .* more than 64/);
    expect(sparqlLimitProblem(`SELECT * WHERE { ?s ex:a\\' ?o FILTER(${deep(MAX_SPARQL_NESTING + 5)}) } #'`)).toMatch(/nests/);
  });

  it('does not take `<…\\…>` for an IRI (IRIs hold no backslash): the brackets inside count', () => {
    expect(sparqlLimitProblem(`SELECT * WHERE { FILTER(1 <${deep(MAX_SPARQL_NESTING + 5)}\\x>) }`)).toMatch(/nests/);
  });

  it('still skips brackets inside real strings, IRIs and comments', () => {
    const hidden = deep(MAX_SPARQL_NESTING + 5);
    expect(sparqlLimitProblem(`SELECT * WHERE { ?s <http://x/${'('.repeat(100)}> "${hidden}" } # ${hidden}`)).toBeNull();
  });

  it('blanks out strings, IRIs and comments in one linear pass, also on an unterminated run of escaped quotes', () => {
    expect(withoutLiterals('PREFIX ex: <http://x/> SELECT "a{" ?x # DROP\nWHERE').replace(/\s+/g, ' ')).toBe('PREFIX ex: SELECT ?x WHERE');
    // A regular expression for strings took quadratic time on this; the scan reads it once.
    const quotes = `SELECT "${'\\"'.repeat(400_000)}`;
    expect(withoutLiterals(quotes).trim()).toBe('SELECT');
  });
});
