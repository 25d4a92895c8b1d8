/** Pure rules of the GraphQL context (functions/domain/graphql): names, shapes, languages, TSV terms, SPARQL text. */
import { Parser } from 'n3';
import { describe, expect, it } from 'vitest';
import { byPreference, parseLanguagePreference } from '../../functions/domain/graphql/language.js';
import { illegalName, kebabToCamel, localName, nameOfIri, scalarNameOf } from '../../functions/domain/graphql/names.js';
import { schemaModelOf } from '../../functions/domain/graphql/shapes.js';
import { literal, tsvRows } from '../../functions/domain/graphql/sparql-text.js';
import { cursorOf, positionOf } from '../../functions/domain/graphql/filters.js';

const XSD = 'http://www.w3.org/2001/XMLSchema#';

describe('names', () => {
  it('take the part after the last # or /, kebab-case to camelCase', () => {
    expect(localName('https://e.org/def#birth-place')).toBe('birth-place');
    expect(localName('https://e.org/def/Book')).toBe('Book');
    expect(kebabToCamel('date-of--birth')).toBe('dateOfBirth');
    expect(nameOfIri('https://e.org/def/sub-title')).toBe('subTitle');
    expect(illegalName('2ndEdition')).toMatch(/not a legal GraphQL name/);
    expect(illegalName('__type')).toMatch(/reserves for introspection/);
    expect(illegalName('ok_Name1')).toBeNull();
  });

  it('name scalars after their datatype', () => {
    expect(scalarNameOf(`${XSD}string`)).toBe('XsdString');
    expect(scalarNameOf(`${XSD}dateTime`)).toBe('XsdDateTime');
    expect(scalarNameOf('http://www.w3.org/1999/02/22-rdf-syntax-ns#langString')).toBe('RdfsLangString');
    expect(scalarNameOf('http://www.opengis.net/ont/geosparql#wktLiteral')).toBe('GeoWktLiteral');
    expect(scalarNameOf('https://e.org/dt/money-amount')).toBe('MoneyAmount');
  });
});

describe('shapes', () => {
  const model = (turtle: string) =>
    schemaModelOf(new Parser().parse(`@prefix sh: <http://www.w3.org/ns/shacl#> . @prefix xsd: <${XSD}> . @prefix ex: <https://e.org/> .\n${turtle}`));

  it('skip what cannot be a field, saying why', () => {
    const m = model(`ex:S a sh:NodeShape ; sh:targetClass ex:Thing ; sh:property
      [ sh:path ( ex:a ex:b ) ; sh:datatype xsd:string ] , [ sh:path ex:noType ] , [ sh:path ex:id ; sh:datatype xsd:string ] ,
      [ sh:path ex:ok ; sh:datatype xsd:string ; sh:minCount 1 ; sh:maxCount 1 ] , [ sh:path ex:link ; sh:nodeKind sh:IRI ] .`);
    expect(m.types.map((t) => t.name)).toEqual(['Thing']);
    expect(m.types[0]!.fields.map((f) => [f.name, f.list, f.nonNull, f.value.kind])).toEqual([
      ['link', true, false, 'iri'],
      ['ok', false, true, 'scalar'],
    ]);
    expect(m.errors).toHaveLength(3);
    expect(m.errors.join('\n')).toMatch(/not a single IRI/);
    expect(m.errors.join('\n')).toMatch(/GraphQL type is unknown/);
    expect(m.errors.join('\n')).toMatch(/"id" is the IRI of every type/);
  });

  it('make one type of every shape that targets a class, and follow sh:node to a typed shape', () => {
    const m = model(`ex:A a sh:NodeShape ; sh:targetClass ex:Book ; sh:property [ sh:path ex:title ; sh:datatype xsd:string ] .
      ex:B a sh:NodeShape ; sh:targetClass ex:Book ; sh:property [ sh:path ex:isbn ; sh:datatype xsd:string ; sh:maxCount 1 ] , [ sh:path ex:by ; sh:node ex:P ] .
      ex:P a sh:NodeShape ; sh:targetClass ex:Person .`);
    expect(m.errors).toEqual([]);
    expect(m.types.map((t) => [t.name, t.fields.map((f) => f.name)])).toEqual([
      ['Book', ['by', 'isbn', 'title']],
      ['Person', []],
    ]);
    expect(m.types[0]!.fields[0]!.value).toEqual({ kind: 'object', type: 'Person' });
  });

  it('keep no type whose name the schema generates or uses itself', () => {
    const m = model(`ex:A a sh:NodeShape ; sh:targetClass ex:Book ; sh:property [ sh:path ex:x ; sh:datatype ex:BookEdge ] .
      ex:B a sh:NodeShape ; sh:targetClass ex:BookConnection . ex:C a sh:NodeShape ; sh:targetClass ex:PageInfo .`);
    expect(m.types.map((t) => [t.name, t.fields.length])).toEqual([['Book', 0]]);
    expect(m.errors).toHaveLength(3);
    expect(m.errors.join('\n')).toMatch(/scalar of datatype <https:\/\/e\.org\/BookEdge> would be named "BookEdge"/);
  });
});

describe('languages', () => {
  it('parse Accept-Language syntax and order values by it', () => {
    const ranges = parseLanguagePreference('nl, en;q=.5, *;q=0.1');
    const values = [
      { value: 'a', language: 'en-GB' },
      { value: 'b', language: 'fr' },
      { value: 'c', language: 'nl' },
      { value: 'd', language: null },
    ];
    expect(byPreference(values, ranges).map((v) => v.value)).toEqual(['c', 'a', 'b', 'd']);
    expect(byPreference(values, parseLanguagePreference('en-US, de')).map((v) => v.value)).toEqual([]);
    expect(() => parseLanguagePreference('en;q=1.5')).toThrow(/not a weight/);
    expect(() => parseLanguagePreference(' , ')).toThrow(/at least one language/);
  });
});

describe('SPARQL text', () => {
  it('escapes literals and reads TSV terms back', () => {
    expect(literal('a "quoted"\nline\\', { language: 'en' })).toBe('"a \\"quoted\\"\\nline\\\\"@en');
    expect(literal('5', { datatype: `${XSD}integer` })).toBe(`"5"^^<${XSD}integer>`);
    expect(() => literal('x', { language: 'e n' })).toThrow(/not a language tag/);
    const rows = tsvRows(`?a\t?b\n<https://e.org/x>\t"tab\\tand \\"quote\\" \\u00e9"@fr\n_:b1\t42\n"x"^^<${XSD}date>\t1.5e3\n\ttrue\n`);
    expect(rows).toEqual([
      { a: { type: 'uri', value: 'https://e.org/x' }, b: { type: 'literal', value: 'tab\tand "quote" é', 'xml:lang': 'fr' } },
      { a: { type: 'bnode', value: 'b1' }, b: { type: 'literal', value: '42', datatype: `${XSD}integer` } },
      { a: { type: 'literal', value: 'x', datatype: `${XSD}date` }, b: { type: 'literal', value: '1.5e3', datatype: `${XSD}double` } },
      { a: undefined, b: { type: 'literal', value: 'true', datatype: `${XSD}boolean` } },
    ]);
  });

  it('cursors are positions only this endpoint makes', () => {
    expect(positionOf(cursorOf(41))).toBe(41);
    expect(() => positionOf('bm9wZQ')).toThrow(/is not a cursor/);
    expect(() => positionOf(Buffer.from('o:-1').toString('base64url'))).toThrow(/is not a cursor/);
  });
});
