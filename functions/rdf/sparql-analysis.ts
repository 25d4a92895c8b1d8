/** What a SPARQL request is, read with sparqljs: its form, and whether it is an update. */
import sparqljs from 'sparqljs';
import type { QueryForm } from './sparql-formats.js';

export class SparqlSyntaxError extends Error {
  override name = 'SparqlSyntaxError';
}

export type Analysis = { kind: 'query'; form: QueryForm; definesDataset: boolean } | { kind: 'update' };

const UPDATE_KEYWORDS = /^(INSERT|DELETE|LOAD|CLEAR|CREATE|DROP|COPY|MOVE|ADD|WITH)$/i;

/**
 * The first keyword of the request, skipping comments, IRIs, strings and prologue: enough to tell
 * the form when sparqljs rejects a request the engine accepts (e.g. \u escapes inside IRIs).
 */
function formByKeyword(text: string): Analysis | null {
  const stripped = text
    .replace(/<[^<>\s]*>/g, ' ')
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'/g, ' ')
    .replace(/#[^\n]*/g, ' ');
  for (const word of stripped.match(/[A-Za-z]+/g) ?? []) {
    if (/^(PREFIX|BASE)$/i.test(word)) continue;
    if (/^(SELECT|ASK|CONSTRUCT|DESCRIBE)$/i.test(word)) {
      return { kind: 'query', form: word.toLowerCase() as QueryForm, definesDataset: /\bFROM\b/i.test(stripped) };
    }
    if (UPDATE_KEYWORDS.test(word)) return { kind: 'update' };
  }
  return null;
}

/**
 * Parses the request; throws SparqlSyntaxError with the parser's message (line numbers included).
 * When sparqljs fails but the form is plain from the first keyword, the engine gets the last word.
 */
export function analyzeSparql(text: string, baseIri?: string): Analysis {
  // The same texts come again and again (saved queries, dashboards): parse each once.
  const key = `${baseIri ?? ''}\u0000${text}`;
  const cached = analyses.get(key);
  if (cached) return cached;
  const analysis = analyzeUncached(text, baseIri);
  if (analyses.size >= MAX_CACHED) analyses.delete(analyses.keys().next().value!);
  analyses.set(key, analysis);
  return analysis;
}

const analyses = new Map<string, Analysis>();
const MAX_CACHED = 1000;

function analyzeUncached(text: string, baseIri?: string): Analysis {
  let parsed: sparqljs.SparqlQuery;
  try {
    parsed = new sparqljs.Parser({ baseIRI: baseIri }).parse(text);
  } catch (e) {
    const byKeyword = /\\u|\\U/.test(text) ? formByKeyword(text) : null;
    if (byKeyword) return byKeyword;
    throw new SparqlSyntaxError(`The SPARQL request does not parse: ${(e as Error).message.split('\n').slice(0, 3).join(' ')}`);
  }
  if (parsed.type === 'update') return { kind: 'update' };
  const from = (parsed as { from?: { default?: unknown[]; named?: unknown[] } }).from;
  return {
    kind: 'query',
    form: parsed.queryType.toLowerCase() as QueryForm,
    definesDataset: (from?.default?.length ?? 0) + (from?.named?.length ?? 0) > 0,
  };
}
