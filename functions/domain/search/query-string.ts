/**
 * The query strings of `query_string` (Lucene's common syntax) and `simple_query_string`, parsed
 * into the port's query nodes. Supported: words, "phrases" (with ~slop), `word*` prefixes,
 * wildcards (`?`, `*` inside a word), `word~` / `word~1` fuzziness, `+`/`-` (must, must not),
 * AND/OR/NOT (`&&`, `||`, `!`), parentheses, `^2` boosts; query_string also `field:value`,
 * `field:"phrase"`, `field:(a b)`, ranges `field:[1 TO 5]`, `{a TO b}`, `field:>=3`, and `*:*`.
 * simple_query_string's operators are `+` (AND), `|` (OR), `-` (NOT); a syntax error there is
 * never an error (as in Elasticsearch): the text is searched as words instead.
 */
import type { FieldValue, Fuzziness, QueryNode, TextField } from '../../ports/search-index.js';

export interface QueryStringOptions {
  syntax: 'lucene' | 'simple';
  fields: TextField[];
  defaultOperator: 'or' | 'and';
  fuzziness: Fuzziness;
  /** Slop of quoted phrases without their own `~n` (query_string's phrase_slop). */
  phraseSlop?: number;
}

type Token =
  | { t: 'word'; v: string; quoted: boolean }
  | { t: '(' | ')' | 'and' | 'or' | 'not' | 'plus' | 'minus' | ':' }
  | { t: 'range'; v: string }
  | { t: 'suffix'; v: string };

const SPECIAL_LUCENE = new Set(['(', ')', '"', ':', '[', '{', '^', '~']);

function tokenize(text: string, syntax: 'lucene' | 'simple'): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    if (c === '(' || c === ')') {
      out.push({ t: c });
      i++;
      continue;
    }
    if (c === '"') {
      const end = text.indexOf('"', i + 1);
      if (end < 0) throw new SyntaxError('a quoted phrase is not closed; add the closing ".');
      out.push({ t: 'word', v: text.slice(i + 1, end), quoted: true });
      i = end + 1;
      continue;
    }
    if ((c === '~' || c === '^') && out.length > 0) {
      const m = /^[~^](\d+(\.\d+)?)?/.exec(text.slice(i))!;
      out.push({ t: 'suffix', v: m[0] });
      i += m[0].length;
      continue;
    }
    if (syntax === 'simple') {
      if (c === '+' || c === '|' || c === '-') {
        out.push({ t: c === '+' ? 'and' : c === '|' ? 'or' : 'not' });
        i++;
        continue;
      }
    } else {
      if (c === '+' || c === '-' || c === '!') {
        out.push({ t: c === '+' ? 'plus' : c === '-' ? 'minus' : 'not' });
        i++;
        continue;
      }
      if (text.startsWith('&&', i) || text.startsWith('||', i)) {
        out.push({ t: c === '&' ? 'and' : 'or' });
        i += 2;
        continue;
      }
      if (c === ':') {
        out.push({ t: ':' });
        i++;
        continue;
      }
      if (c === '[' || c === '{') {
        const end = text.slice(i).search(/[\]}]/);
        if (end < 0) throw new SyntaxError('a range is not closed; write [from TO to].');
        out.push({ t: 'range', v: text.slice(i, i + end + 1) });
        i += end + 1;
        continue;
      }
    }
    let j = i;
    while (j < text.length && !/\s/.test(text[j]!) && !(syntax === 'lucene' ? SPECIAL_LUCENE.has(text[j]!) : '()"~^|+'.includes(text[j]!))) {
      if (text[j] === '\\' && j + 1 < text.length) j++;
      j++;
    }
    if (j === i) throw new SyntaxError(`unexpected "${c}" at ${i}.`);
    const word = text.slice(i, j).replace(/\\(.)/g, '$1');
    if (syntax === 'lucene' && (word === 'AND' || word === 'OR' || word === 'NOT')) out.push({ t: word.toLowerCase() as 'and' });
    else out.push({ t: 'word', v: word, quoted: false });
    i = j;
  }
  return out;
}

type Occur = 'must' | 'should' | 'must_not';

class Parser {
  private pos = 0;
  constructor(
    private readonly tokens: Token[],
    private readonly options: QueryStringOptions,
  ) {}

  parse(): QueryNode {
    const node = this.group(this.options.fields, false);
    if (this.pos < this.tokens.length) throw new SyntaxError('unbalanced parentheses; close each ( with ).');
    return node;
  }

  private peek(): Token | undefined {
    return this.tokens[this.pos];
  }

  /** Clauses up to `)` (or the end), joined by operators or the default one. */
  private group(fields: TextField[], nested: boolean): QueryNode {
    const clauses: { occur: Occur; node: QueryNode; explicitAnd: boolean }[] = [];
    let pendingAnd = false;
    let pendingOr = false;
    for (let guard = 0; guard < 10_000; guard++) {
      const tok = this.peek();
      if (!tok) break;
      if (tok.t === ')') {
        if (!nested) throw new SyntaxError('unbalanced parentheses: a ) without (.');
        break;
      }
      if (tok.t === 'and' || tok.t === 'or') {
        this.pos++;
        if (tok.t === 'and') {
          pendingAnd = true;
          const last = clauses[clauses.length - 1];
          if (last && last.occur === 'should') last.occur = 'must';
        } else pendingOr = true;
        continue;
      }
      let occur: Occur = pendingAnd ? 'must' : pendingOr ? 'should' : this.options.defaultOperator === 'and' ? 'must' : 'should';
      if (tok.t === 'not' || tok.t === 'minus') {
        occur = 'must_not';
        this.pos++;
      } else if (tok.t === 'plus') {
        occur = 'must';
        this.pos++;
      }
      const node = this.clause(fields);
      clauses.push({ occur, node, explicitAnd: pendingAnd });
      pendingAnd = false;
      pendingOr = false;
    }
    if (clauses.length === 0) return { kind: 'match_none' };
    if (clauses.length === 1 && clauses[0]!.occur !== 'must_not') return clauses[0]!.node;
    const must = clauses.filter((c) => c.occur === 'must').map((c) => c.node);
    const should = clauses.filter((c) => c.occur === 'should').map((c) => c.node);
    const mustNot = clauses.filter((c) => c.occur === 'must_not').map((c) => c.node);
    // Only negations: everything else (Elasticsearch adds match_all).
    if (must.length === 0 && should.length === 0) must.push({ kind: 'match_all', boost: 1 });
    return { kind: 'bool', must, should, mustNot, filter: [], boost: 1, ...(must.length === 0 ? { minimumShouldMatch: 1 } : {}) };
  }

  private clause(fields: TextField[]): QueryNode {
    const tok = this.tokens[this.pos++];
    if (!tok) throw new SyntaxError('the query ends where a term was expected.');
    if (tok.t === '(') {
      const node = this.group(fields, true);
      if (this.tokens[this.pos++]?.t !== ')') throw new SyntaxError('unbalanced parentheses; close each ( with ).');
      return this.suffixes(node);
    }
    if (tok.t !== 'word') throw new SyntaxError(`unexpected ${tok.t === 'range' ? `range ${tok.v}` : tok.t} where a term was expected.`);
    // field:value (query_string only)
    if (!tok.quoted && this.peek()?.t === ':') {
      this.pos++;
      const field = tok.v;
      const next = this.peek();
      if (field === '*' && next?.t === 'word' && next.v === '*') {
        this.pos++;
        return { kind: 'match_all', boost: 1 };
      }
      if (next?.t === 'range') {
        this.pos++;
        return rangeNode(field, next.v);
      }
      if (next?.t === 'word' && !next.quoted && /^[<>]=?/.test(next.v)) {
        this.pos++;
        const m = /^([<>]=?)(.*)$/.exec(next.v)!;
        const bound = { '>': 'gt', '>=': 'gte', '<': 'lt', '<=': 'lte' }[m[1]!] as 'gt';
        return { kind: 'range', field, [bound]: literal(m[2]!), boost: 1 };
      }
      if (field === '_exists_' && next?.t === 'word') {
        this.pos++;
        return { kind: 'exists', field: next.v, boost: 1 };
      }
      return this.clause([{ field, boost: 1 }]);
    }
    return this.suffixes(this.term(tok.v, tok.quoted, fields));
  }

  private term(text: string, quoted: boolean, fields: TextField[]): QueryNode {
    if (quoted) return { kind: 'phrase', fields, query: text, slop: this.options.phraseSlop ?? 0, prefix: false, boost: 1 };
    const body = text.slice(0, -1);
    if (text.endsWith('*') && !/[*?]/.test(body) && body.length > 0) return { kind: 'text', fields, query: body, operator: 'or', fuzziness: 0, prefix: true, boost: 1 };
    if (/[*?]/.test(text)) {
      const nodes: QueryNode[] = fields.map((f) => ({ kind: 'wildcard', field: f.field, pattern: text, caseInsensitive: true, boost: f.boost }));
      return nodes.length === 1 ? nodes[0]! : { kind: 'bool', must: [], should: nodes, mustNot: [], filter: [], minimumShouldMatch: 1, boost: 1 };
    }
    return { kind: 'text', fields, query: text, operator: 'or', fuzziness: this.options.fuzziness, prefix: false, boost: 1 };
  }

  /** `~n` (fuzziness of a word, slop of a phrase) and `^n` (boost) after a clause. */
  private suffixes(node: QueryNode): QueryNode {
    for (let tok = this.peek(); tok?.t === 'suffix'; tok = this.peek()) {
      this.pos++;
      const n = tok.v.length > 1 ? Number(tok.v.slice(1)) : undefined;
      if (tok.v[0] === '^') {
        if ('boost' in node) node.boost = n ?? 1;
      } else if (node.kind === 'phrase') node.slop = n ?? 0;
      else if (node.kind === 'text') node.fuzziness = n === undefined ? 'AUTO' : (Math.min(2, Math.max(0, Math.round(n))) as Fuzziness);
    }
    return node;
  }
}

function literal(s: string): FieldValue {
  const n = Number(s);
  return s.trim() !== '' && Number.isFinite(n) ? n : s;
}

function rangeNode(field: string, text: string): QueryNode {
  const m = /^([[{])\s*(\S+)\s+TO\s+(\S+)\s*([\]}])$/.exec(text);
  if (!m) throw new SyntaxError(`the range ${text} is not [from TO to] or {from TO to}.`);
  const node: QueryNode = { kind: 'range', field, boost: 1 };
  if (m[2] !== '*') node[m[1] === '[' ? 'gte' : 'gt'] = literal(m[2]!);
  if (m[3] !== '*') node[m[4] === ']' ? 'lte' : 'lt'] = literal(m[3]!);
  return node;
}

export function parseQueryString(text: string, options: QueryStringOptions): QueryNode {
  try {
    return new Parser(tokenize(text, options.syntax), options).parse();
  } catch (e) {
    if (options.syntax === 'lucene' || !(e instanceof SyntaxError)) throw e;
    // simple_query_string never fails: its words, as words.
    const words = text.replace(/[()"|+~^-]/g, ' ').trim();
    return words ? { kind: 'text', fields: options.fields, query: words, operator: options.defaultOperator, fuzziness: 0, prefix: false, boost: 1 } : { kind: 'match_none' };
  }
}
