/**
 * Saved-query templates: API variables substituted into the query (with sparqljs, so a value can
 * never inject syntax) and pages cut out with LIMIT/OFFSET on top of the query's own.
 */
import sparqljs from 'sparqljs';
import { SparqlSyntaxError } from './sparql-analysis.js';

export interface TermValue {
  termType: 'NamedNode' | 'Literal';
  value: string;
  datatype?: string;
  language?: string;
}

type Node = Record<string, unknown>;

const XSD_STRING = 'http://www.w3.org/2001/XMLSchema#string';
const RDF_LANG_STRING = 'http://www.w3.org/1999/02/22-rdf-syntax-ns#langString';

function termOf(value: TermValue): Node {
  if (value.termType === 'NamedNode') return { termType: 'NamedNode', value: value.value };
  const datatype = value.language ? RDF_LANG_STRING : (value.datatype ?? XSD_STRING);
  return { termType: 'Literal', value: value.value, language: value.language ?? '', datatype: { termType: 'NamedNode', value: datatype } };
}

/** Replaces every occurrence of the variables by their terms; projected ones become `(term AS ?v)`. */
function substitute(node: unknown, values: Map<string, Node>, inProjection = false): unknown {
  if (Array.isArray(node)) return node.map((n) => substitute(n, values, inProjection));
  if (typeof node !== 'object' || node === null) return node;
  const obj = node as Node;
  if (obj.termType === 'Variable') {
    const term = values.get(obj.value as string);
    if (!term) return node;
    return inProjection ? { expression: term, variable: obj } : term;
  }
  // Terms and sparqljs' own classes (e.g. the `*` wildcard) carry no variables to replace and
  // keep their prototype getters only when left as they are.
  if (Object.getPrototypeOf(obj) !== Object.prototype) return node;
  const out: Node = {};
  for (const [key, child] of Object.entries(obj)) {
    if (key === 'variables' && Array.isArray(child) && obj.queryType === 'SELECT') {
      out[key] = child.map((v) => substitute(v, values, true));
    } else if (key === 'variable' && 'expression' in obj) {
      // `(expr AS ?v)` keeps its variable name.
      out[key] = child;
    } else {
      out[key] = substitute(child, values, false);
    }
  }
  return out;
}

export interface Page {
  /** 1-based. */
  page: number;
  pageSize: number;
}

/** Parsed templates by text; substitution builds new objects and never changes a cached tree. */
const parsed = new Map<string, Node>();
const MAX_PARSED = 500;

function parse(query: string): Node {
  const cached = parsed.get(query);
  if (cached) return cached;
  try {
    const tree = new sparqljs.Parser().parse(query) as unknown as Node;
    if (parsed.size >= MAX_PARSED) parsed.delete(parsed.keys().next().value!);
    parsed.set(query, tree);
    return tree;
  } catch (e) {
    throw new SparqlSyntaxError(`The saved query does not parse: ${(e as Error).message.split('\n').slice(0, 3).join(' ')}`);
  }
}

/** The names of the variables a query mentions (for checking API variables against it). */
export function queryVariables(query: string): Set<string> {
  const names = new Set<string>();
  const walk = (n: unknown): void => {
    if (Array.isArray(n)) return n.forEach(walk);
    if (typeof n !== 'object' || n === null) return;
    const o = n as Node;
    if (o.termType === 'Variable') names.add(o.value as string);
    Object.values(o).forEach(walk);
  };
  walk(parse(query));
  return names;
}

/**
 * The query with `values` substituted and, when `page` is given, limited to that page plus one
 * row (so the caller knows whether a next page exists), respecting the query's own LIMIT/OFFSET.
 * Returns null when the page lies beyond the query's own LIMIT.
 */
export function instantiate(query: string, values: Map<string, TermValue>, page?: Page, extraRows = 1): string | null {
  const terms = new Map([...values].map(([k, v]) => [k, termOf(v)] as const));
  // A shallow copy: the paging fields below must never land in the cached tree.
  const ast = { ...(substitute(parse(query), terms) as Node) };
  if (page && ast.type === 'query') {
    const ownOffset = (ast.offset as number | undefined) ?? 0;
    const ownLimit = ast.limit as number | undefined;
    const skip = (page.page - 1) * page.pageSize;
    if (ownLimit !== undefined && skip >= ownLimit) return null;
    let limit = page.pageSize + extraRows;
    if (ownLimit !== undefined) limit = Math.min(limit, ownLimit - skip);
    ast.offset = ownOffset + skip;
    ast.limit = limit;
  }
  return new sparqljs.Generator().stringify(ast as unknown as sparqljs.SparqlQuery);
}

/** A CONSTRUCT/DESCRIBE query's WHERE as `SELECT *`, to ask whether more solutions follow a page. */
export function solutionsProbe(query: string, values: Map<string, TermValue>, offset: number): string {
  const terms = new Map([...values].map(([k, v]) => [k, termOf(v)] as const));
  const ast = substitute(parse(query), terms) as Node;
  const probe: Node = {
    type: 'query',
    queryType: 'SELECT',
    variables: [{ termType: 'Wildcard', value: '*' }],
    where: ast.where ?? [],
    prefixes: ast.prefixes ?? {},
    offset: ((ast.offset as number | undefined) ?? 0) + offset,
    limit: 1,
  };
  if (ast.from) probe.from = ast.from;
  return new sparqljs.Generator().stringify(probe as unknown as sparqljs.SparqlQuery);
}
