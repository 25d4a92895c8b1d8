/**
 * A generated dataset for text search: `count` subjects with names and descriptions in several
 * languages, prices (integers), ratings (decimals), creation dates (xsd:date) and categories,
 * plus a few hand-made subjects for relevance checks. N-Triples text.
 */
export const EX = 'https://example.org/';
export const SCHEMA = 'https://schema.org/';
/** Field names: property IRIs with every '.' written as a space. */
export const F = {
  name: 'https://schema org/name',
  description: 'https://schema org/description',
  dateCreated: 'https://schema org/dateCreated',
  price: 'https://example org/def/price',
  rating: 'https://example org/def/rating',
  category: 'https://example org/def/category',
  type: 'http://www w3 org/1999/02/22-rdf-syntax-ns#type',
};

const WORDS: Record<string, string[]> = {
  en: ['river', 'mountain', 'garden', 'silver', 'window', 'harbour', 'forest', 'lantern', 'meadow', 'castle', 'thunder', 'velvet'],
  nl: ['rivier', 'berg', 'tuin', 'zilver', 'venster', 'haven', 'bos', 'lantaarn', 'weide', 'kasteel', 'donder', 'fluweel'],
  de: ['fluss', 'gebirge', 'garten', 'silber', 'fenster', 'hafen', 'wald', 'laterne', 'wiese', 'schloss', 'donner', 'samt'],
  fr: ['rivière', 'montagne', 'jardin', 'argent', 'fenêtre', 'port', 'forêt', 'lanterne', 'prairie', 'château', 'tonnerre', 'velours'],
};
const LANGS = Object.keys(WORDS);
export const CATEGORIES = ['book', 'film', 'game', 'music'];

const lit = (s: string) => JSON.stringify(s);
const iri = (s: string) => `<${s}>`;

/** Deterministic pseudo-random words (no Math.random: the same data every run). */
function words(n: number, lang: string, count: number): string {
  const pool = WORDS[lang]!;
  const out: string[] = [];
  let x = Math.imul(n + 1, 2654435761) >>> 0;
  for (let i = 0; i < count; i++) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    out.push(pool[(x >>> 16) % pool.length]!);
  }
  return out.join(' ');
}

export function itemIri(n: number): string {
  return `${EX}id/item/${n}`;
}

export function* searchDataLines(count: number): Generator<string> {
  for (let n = 0; n < count; n++) {
    const s = iri(itemIri(n));
    const lang = LANGS[n % LANGS.length]!;
    const day = new Date(Date.UTC(2000, 0, 1) + n * 86_400_000).toISOString().slice(0, 10);
    yield `${s} ${iri('http://www.w3.org/1999/02/22-rdf-syntax-ns#type')} ${iri(`${EX}def/Item`)} .`;
    yield `${s} ${iri(`${SCHEMA}name`)} ${lit(`Item ${n}`)}@${lang} .`;
    yield `${s} ${iri(`${SCHEMA}description`)} ${lit(words(n, lang, 8))}@${lang} .`;
    yield `${s} ${iri(`${EX}def/price`)} "${n % 1000}"^^<http://www.w3.org/2001/XMLSchema#integer> .`;
    yield `${s} ${iri(`${EX}def/rating`)} "${(n % 50) / 10}"^^<http://www.w3.org/2001/XMLSchema#decimal> .`;
    yield `${s} ${iri(`${SCHEMA}dateCreated`)} "${day}"^^<http://www.w3.org/2001/XMLSchema#date> .`;
    yield `${s} ${iri(`${EX}def/category`)} ${lit(CATEGORIES[n % CATEGORIES.length]!)} .`;
  }
}

/** Hand-made subjects: exact vs fuzzy names, a phrase vs the same words scattered, Japanese, a blank node. */
export const SPECIAL = `<${EX}id/pikachu> <${SCHEMA}name> "Pikachu"@en .
<${EX}id/pikachu> <${SCHEMA}name> "ピカチュウ"@ja .
<${EX}id/pikachu> <${EX}def/price> "25"^^<http://www.w3.org/2001/XMLSchema#integer> .
<${EX}id/pikachu> <${EX}def/category> "game" .
<${EX}id/pikachuu> <${SCHEMA}name> "Pikachuu"@en .
<${EX}id/phrase> <${SCHEMA}description> "a quick brown fox sleeps in the sun"@en .
<${EX}id/scattered> <${SCHEMA}description> "the fox was brown and the cat was quick"@en .
<${EX}id/noprice> <${SCHEMA}name> "Nameless wonder" .
_:b1 <${SCHEMA}name> "Anonymous blank node" .
`;

export function searchDataset(count: number): string {
  return `${[...searchDataLines(count)].join('\n')}\n${SPECIAL}`;
}
