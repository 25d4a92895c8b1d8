/**
 * Limits every untrusted SPARQL text must meet before any parser (sparqljs, oxigraph) sees it,
 * checked by one linear pass that allocates nothing.
 *
 * Measured on this project's 2-core machine (sparqljs 3.7.3, Node 20): parse time grows with the
 * cube of nesting depth (`{…}` 1,000 deep 117 ms, 2,000 deep 817 ms, 5,000 deep (10 KB) 11.9 s),
 * and oxigraph 0.5 traps ("memory access out of bounds", poisoning its instance) at 1,000 nested
 * braces. At 64 levels every bracket kind parses in under 6 ms; real queries rarely pass 20.
 * Flat texts stay linear but not cheap (1 MB: 0.9 s of VALUES rows, 3.6 s of `||` terms), so
 * parsing runs off the main thread (see sparql-parser-pool.ts) and the size limit stays at the
 * protocol's 1,000,000 characters.
 */

/** Longest SPARQL text taken anywhere (a GET URL, a form field, a request body). */
export const MAX_SPARQL_CHARS = 1_000_000;

/** Deepest nesting of `{`, `(` and `[` (together) outside strings, IRIs and comments. */
export const MAX_SPARQL_NESTING = 64;

const OPEN = new Set(['{', '(', '['].map((c) => c.charCodeAt(0)));
const CLOSE = new Set(['}', ')', ']'].map((c) => c.charCodeAt(0)));
const HASH = 0x23;
const LT = 0x3c;
const GT = 0x3e;
const DQUOTE = 0x22;
const SQUOTE = 0x27;
const BACKSLASH = 0x5c;
const LF = 0x0a;
const CR = 0x0d;
/** Characters that end an IRI reference without closing it (then `<` was a less-than). */
const NOT_IN_IRI = new Set(['<', '"', '{', '}', '|', '^', '`', '\\'].map((c) => c.charCodeAt(0)));

/** Index just past the comment starting at `i` (to the end of its line). */
function commentEnd(text: string, i: number): number {
  let j = i + 1;
  while (j < text.length && text.charCodeAt(j) !== LF && text.charCodeAt(j) !== CR) j++;
  return j;
}

/**
 * Index just past the IRI reference at `i`, or `i + 1` when `<` starts none (an operator). A
 * failed attempt stops at the next `<` at the latest, so no character is read more than twice.
 */
function iriEnd(text: string, i: number): number {
  for (let j = i + 1; j < text.length; j++) {
    const c = text.charCodeAt(j);
    if (c === GT) return j + 1;
    if (c <= 0x20 || NOT_IN_IRI.has(c)) return i + 1;
  }
  return i + 1;
}

/**
 * Index just past the string literal at `i` ('…', "…", '''…''' or """…"""). A short string
 * unterminated on its line ends there: the parsers fail on its quote before reading further.
 */
function stringEnd(text: string, i: number): number {
  const quote = text.charCodeAt(i);
  const long = text.charCodeAt(i + 1) === quote && text.charCodeAt(i + 2) === quote;
  let j = long ? i + 3 : i + 1;
  while (j < text.length) {
    const c = text.charCodeAt(j);
    if (c === BACKSLASH) {
      j += 2;
    } else if (c === quote && (!long || (text.charCodeAt(j + 1) === quote && text.charCodeAt(j + 2) === quote))) {
      if (!long) return j + 1;
      // A long string may end with one or two quotes of its own: the closing three are the last.
      let end = j + 3;
      while (end < text.length && end - j < 5 && text.charCodeAt(end) === quote) end++;
      return end;
    } else if (!long && (c === LF || c === CR)) {
      return j;
    } else {
      j++;
    }
  }
  return text.length;
}

/**
 * What is wrong with the text by the limits above, as a message naming the limit, or null when
 * it meets them. `what` names the text in the message ("query", "update", "saved query").
 */
export function sparqlLimitProblem(text: string, what = 'SPARQL request'): string | null {
  if (text.length > MAX_SPARQL_CHARS) {
    return `The ${what} has ${text.length} characters, more than the ${MAX_SPARQL_CHARS} allowed; send a shorter one.`;
  }
  let depth = 0;
  let i = 0;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (OPEN.has(c)) {
      depth++;
      if (depth > MAX_SPARQL_NESTING) {
        return `The ${what} nests groups, brackets or parentheses more than ${MAX_SPARQL_NESTING} deep (at character ${i + 1}); flatten it or split it into several queries.`;
      }
      i++;
    } else if (CLOSE.has(c)) {
      if (depth > 0) depth--;
      i++;
    } else if (c === HASH) {
      i = commentEnd(text, i);
    } else if (c === LT) {
      i = iriEnd(text, i);
    } else if (c === DQUOTE || c === SQUOTE) {
      i = stringEnd(text, i);
    } else if (c === BACKSLASH) {
      // An escape in a local name (`ex:a\#`, `ex:a\'`): the next character is a name character.
      i += 2;
    } else {
      i++;
    }
  }
  return null;
}

/**
 * The text with its strings, IRI references and comments blanked out, in one linear pass (the
 * same skipping as the limits above): what is left are keywords, names and punctuation.
 */
export function withoutLiterals(text: string): string {
  const kept: string[] = [];
  let from = 0;
  let i = 0;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    let end = -1;
    if (c === HASH) end = commentEnd(text, i);
    else if (c === LT) end = iriEnd(text, i) > i + 1 ? iriEnd(text, i) : -1;
    else if (c === DQUOTE || c === SQUOTE) end = stringEnd(text, i);
    if (end < 0) {
      i += c === BACKSLASH ? 2 : 1;
      continue;
    }
    kept.push(text.slice(from, i), ' ');
    from = i = end;
  }
  kept.push(text.slice(from));
  return kept.join('');
}
