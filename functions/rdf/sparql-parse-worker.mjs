// sparqljs off the main thread: untrusted SPARQL texts are parsed (and saved-query templates
// filled in) here, so a slow parse never blocks the event loop; the pool terminates this thread
// when a parse outlives its deadline. Plain JavaScript so it runs unchanged under tsx, plain
// Node and in a Lambda bundle (copied beside index.mjs with sparql-lru.mjs; sparqljs installed).
import { parentPort } from 'node:worker_threads';
import sparqljs from 'sparqljs';
import { ByteBoundedLru } from './sparql-lru.mjs';

/**
 * Parsed trees by text, for saved queries and flow templates run again and again. A tree takes
 * at most about 40 bytes of heap per character of its text (measured: 8 for triple patterns,
 * 21 for `||` terms, 33 for a list of 100,000 objects).
 */
const TREE_BYTES_PER_CHAR = 40;
const trees = new ByteBoundedLru(32 * 1024 * 1024, (_tree, key) => TREE_BYTES_PER_CHAR * key.length);

const XSD_STRING = 'http://www.w3.org/2001/XMLSchema#string';
const RDF_LANG_STRING = 'http://www.w3.org/1999/02/22-rdf-syntax-ns#langString';

function parse(text, baseIri) {
  const key = `${baseIri ?? ''}\u0000${text}`;
  const cached = trees.get(key);
  if (cached) return cached;
  const tree = new sparqljs.Parser({ baseIRI: baseIri }).parse(text);
  trees.set(key, tree);
  return tree;
}

function analysisOf(tree, text) {
  // A text of only comments and prologue parses without a form: SPARQL's grammar makes it an empty update.
  if (tree.type === 'update' || !tree.queryType) return { kind: 'update' };
  const analysis = {
    kind: 'query',
    form: tree.queryType.toLowerCase(),
    definesDataset: (tree.from?.default?.length ?? 0) + (tree.from?.named?.length ?? 0) > 0,
  };
  if (text === undefined) return analysis;
  // Unknown extension functions first (the text is generated anew), then SELECT *'s order.
  const known = withoutUnknownFunctions(tree);
  const runs = known === tree ? text : new sparqljs.Generator().stringify(known);
  const explicit = withExplicitProjection(known, runs);
  if (explicit || runs !== text) analysis.text = explicit ?? runs;
  return analysis;
}

/** The function IRIs the engine (oxigraph 0.5) evaluates: the XSD casts. */
const KNOWN_FUNCTIONS = new Set(
  ['boolean', 'double', 'float', 'decimal', 'integer', 'string', 'dateTime', 'time', 'date', 'duration', 'yearMonthDuration', 'dayTimeDuration', 'gYear', 'gMonth', 'gDay', 'gYearMonth', 'gMonthDay'].map(
    (name) => `http://www.w3.org/2001/XMLSchema#${name}`,
  ),
);
const XSD_INTEGER = { termType: 'NamedNode', value: 'http://www.w3.org/2001/XMLSchema#integer' };
/** An expression whose evaluation is an error, as SPARQL 1.1 §17.6 makes a call of an unknown function. */
const EVALUATION_ERROR = {
  type: 'operation',
  operator: '/',
  args: [
    { termType: 'Literal', value: '1', language: '', datatype: XSD_INTEGER },
    { termType: 'Literal', value: '0', language: '', datatype: XSD_INTEGER },
  ],
};

/**
 * The tree with every call of an extension function the engine does not know replaced by an
 * expression that fails when evaluated (the engine refuses the whole query instead): the row is
 * dropped by a FILTER, a BIND leaves its variable unbound. The same tree when there is none.
 */
function withoutUnknownFunctions(node) {
  if (Array.isArray(node)) {
    let changed = false;
    const out = node.map((n) => {
      const r = withoutUnknownFunctions(n);
      if (r !== n) changed = true;
      return r;
    });
    return changed ? out : node;
  }
  if (typeof node !== 'object' || node === null || Object.getPrototypeOf(node) !== Object.prototype) return node;
  if (node.type === 'functionCall' && node.function?.termType === 'NamedNode' && !KNOWN_FUNCTIONS.has(node.function.value)) return EVALUATION_ERROR;
  let out;
  for (const [key, child] of Object.entries(node)) {
    const r = withoutUnknownFunctions(child);
    if (r !== child) {
      out ??= { ...node };
      out[key] = r;
    }
  }
  return out ?? node;
}

const isWildcard = (v) => v instanceof sparqljs.Wildcard || v?.termType === 'Wildcard';

/**
 * The variables `SELECT *` projects, in the order they first appear in the pattern: those in
 * scope by SPARQL 1.1 §18.2.1 (not those only inside MINUS or FILTER; a sub-SELECT's projection).
 */
function inScopeVariables(patterns, out = []) {
  const add = (term) => {
    if (term?.termType === 'Variable' && !out.includes(term.value)) out.push(term.value);
  };
  for (const p of patterns ?? []) {
    switch (p.type) {
      case 'bgp':
        for (const t of p.triples) {
          add(t.subject);
          add(t.predicate);
          add(t.object);
        }
        break;
      case 'graph':
      case 'service':
        add(p.name);
        inScopeVariables(p.patterns, out);
        break;
      case 'group':
      case 'optional':
        inScopeVariables(p.patterns, out);
        break;
      case 'union':
        for (const branch of p.patterns) inScopeVariables([branch], out);
        break;
      case 'bind':
        add(p.variable);
        break;
      case 'values':
        for (const row of p.values) for (const key of Object.keys(row)) add({ termType: 'Variable', value: key.replace(/^[?$]/, '') });
        break;
      case 'query':
        if (p.variables.some(isWildcard)) inScopeVariables(p.where, out);
        else for (const v of p.variables) add(v.variable ?? v);
        break;
      default:
        // filter, minus: no variables come into scope.
        break;
    }
  }
  return out;
}

/**
 * `SELECT *` with its variables written out in query order (the engine answers them sorted by
 * name): the text with only the `*` replaced, or undefined when there is nothing to change or
 * the `*` is not where a plain scan of the prologue expects it.
 */
function withExplicitProjection(tree, text) {
  if (tree.queryType !== 'SELECT' || !tree.variables?.some(isWildcard) || tree.group) return undefined;
  const names = inScopeVariables([...(tree.where ?? []), ...(tree.values ? [{ type: 'values', values: tree.values }] : [])]);
  if (names.length < 2) return undefined;
  const star = starOffset(text);
  if (star === undefined) return undefined;
  return `${text.slice(0, star)}${names.map((n) => `?${n}`).join(' ')}${text.slice(star + 1)}`;
}

/** Offset of the `*` of `[prologue] SELECT [DISTINCT|REDUCED] *`, skipping comments and IRIs. */
function starOffset(text) {
  let i = 0;
  const skipSpace = () => {
    for (;;) {
      while (i < text.length && /\s/.test(text[i])) i++;
      if (text[i] !== '#') return;
      while (i < text.length && text[i] !== '\n' && text[i] !== '\r') i++;
    }
  };
  const word = () => {
    const m = /^[A-Za-z_][A-Za-z0-9_.-]*:?/.exec(text.slice(i, i + 200));
    return m ? m[0] : '';
  };
  for (let guard = 0; guard < 10_000; guard++) {
    skipSpace();
    const w = word();
    if (/^(PREFIX|BASE)$/i.test(w)) {
      i += w.length;
      skipSpace();
      if (/^PREFIX$/i.test(w)) {
        const name = /^[^\s:]*:/.exec(text.slice(i, i + 200));
        if (!name) return undefined;
        i += name[0].length;
        skipSpace();
      }
      if (text[i] !== '<') return undefined;
      const end = text.indexOf('>', i);
      if (end < 0) return undefined;
      i = end + 1;
      continue;
    }
    if (!/^SELECT$/i.test(w)) return undefined;
    i += w.length;
    skipSpace();
    const modifier = word();
    if (/^(DISTINCT|REDUCED)$/i.test(modifier)) {
      i += modifier.length;
      skipSpace();
    }
    return text[i] === '*' ? i : undefined;
  }
  return undefined;
}

function termOf(value) {
  if (value.termType === 'NamedNode') return { termType: 'NamedNode', value: value.value };
  const datatype = value.language ? RDF_LANG_STRING : (value.datatype ?? XSD_STRING);
  return { termType: 'Literal', value: value.value, language: value.language ?? '', datatype: { termType: 'NamedNode', value: datatype } };
}

/** Replaces every occurrence of the variables by their terms; projected ones become `(term AS ?v)`. */
function substitute(node, values, inProjection = false) {
  if (Array.isArray(node)) return node.map((n) => substitute(n, values, inProjection));
  if (typeof node !== 'object' || node === null) return node;
  if (node.termType === 'Variable') {
    const term = values.get(node.value);
    if (!term) return node;
    return inProjection ? { expression: term, variable: node } : term;
  }
  // Terms and sparqljs' own classes (e.g. the `*` wildcard) carry no variables to replace and
  // keep their prototype getters only when left as they are.
  if (Object.getPrototypeOf(node) !== Object.prototype) return node;
  const out = {};
  for (const [key, child] of Object.entries(node)) {
    if (key === 'variables' && Array.isArray(child) && node.queryType === 'SELECT') {
      out[key] = child.map((v) => substitute(v, values, true));
    } else if (key === 'variable' && 'expression' in node) {
      // `(expr AS ?v)` keeps its variable name.
      out[key] = child;
    } else {
      out[key] = substitute(child, values, false);
    }
  }
  return out;
}

const termsOf = (values) => new Map(values.map(([name, value]) => [name, termOf(value)]));

/** See instantiate() in sparql-template.ts. */
function instantiate({ text, values, page, extraRows }) {
  // A shallow copy: the paging fields below must never land in the cached tree.
  const ast = { ...withoutUnknownFunctions(substitute(parse(text), termsOf(values))) };
  if (page && ast.type === 'query') {
    const ownOffset = ast.offset ?? 0;
    const ownLimit = ast.limit;
    const skip = (page.page - 1) * page.pageSize;
    if (ownLimit !== undefined && skip >= ownLimit) return null;
    let limit = page.pageSize + extraRows;
    if (ownLimit !== undefined) limit = Math.min(limit, ownLimit - skip);
    ast.offset = ownOffset + skip;
    ast.limit = limit;
  }
  const out = new sparqljs.Generator().stringify(ast);
  // As for queries sent to an endpoint (analysisOf): SELECT * in the query's variable order.
  return (ast.type === 'query' && withExplicitProjection(ast, out)) || out;
}

export const USING_CONFLICT = 'USING_CONFLICT';

/**
 * The update with the protocol's using-graph-uri / using-named-graph-uri as USING / USING NAMED
 * of every operation that has a WHERE (DELETE WHERE becomes DELETE … USING … WHERE, its pattern
 * the same). The protocol forbids them together with USING or WITH in the update.
 */
function withUsing({ text, baseIri, defaultGraphs, namedGraphs }) {
  const tree = parse(text, baseIri);
  if (tree.type !== 'update') throw new Error('not an update');
  const iri = (value) => ({ termType: 'NamedNode', value });
  const using = { default: defaultGraphs.map(iri), named: namedGraphs.map(iri) };
  const updates = tree.updates.map((op) => {
    if (op.updateType === 'insertdelete') {
      if (op.using || op.graph) throw new Error(USING_CONFLICT);
      return { ...op, using };
    }
    if (op.updateType === 'deletewhere') {
      const where = op.delete.map((q) => (q.type === 'graph' ? { type: 'graph', name: q.name, patterns: [{ type: 'bgp', triples: q.triples }] } : q));
      return { updateType: 'insertdelete', delete: op.delete, insert: [], where, using };
    }
    return op;
  });
  return new sparqljs.Generator().stringify({ ...tree, updates });
}

/**
 * An update's LOAD operations, each replaced by an INSERT DATA of one placeholder triple that the
 * caller swaps for the loaded document's triples (see planLoads() in sparql-analysis.ts). The
 * text is generated with full IRIs (no prefixes or base), so the placeholder is written exactly.
 */
function planLoads({ text, baseIri, token }) {
  const tree = parse(text, baseIri);
  if (tree.type !== 'update') return { text, loads: [] };
  const loads = [];
  const updates = tree.updates.map((op) => {
    if (op.type !== 'load') return op;
    const placeholder = { termType: 'NamedNode', value: `urn:x-ldp-load:${token}:${loads.length}` };
    loads.push({ source: op.source.value, silent: Boolean(op.silent), placeholder: `<${placeholder.value}> <${placeholder.value}> <${placeholder.value}>.` });
    const triples = [{ subject: placeholder, predicate: placeholder, object: placeholder }];
    return { updateType: 'insert', insert: [op.destination ? { type: 'graph', name: op.destination, triples } : { type: 'bgp', triples }] };
  });
  if (!loads.length) return { text, loads };
  return { text: new sparqljs.Generator().stringify({ ...tree, base: undefined, prefixes: {}, updates }), loads };
}

/** See solutionsProbe() in sparql-template.ts. */
function probe({ text, values, offset }) {
  const ast = substitute(parse(text), termsOf(values));
  const query = {
    type: 'query',
    queryType: 'SELECT',
    variables: [new sparqljs.Wildcard()],
    where: ast.where ?? [],
    prefixes: ast.prefixes ?? {},
    offset: (ast.offset ?? 0) + offset,
    limit: 1,
  };
  if (ast.from) query.from = ast.from;
  return new sparqljs.Generator().stringify(query);
}

/**
 * The tree as plain data for postMessage: structured cloning drops prototypes, and sparqljs'
 * `*` wildcard keeps its termType and value on its prototype, so it becomes a plain object
 * (the Generator only reads termType and value). rdf-data-factory terms hold their fields.
 */
function transferable(node) {
  if (Array.isArray(node)) return node.map(transferable);
  if (typeof node !== 'object' || node === null) return node;
  if (node instanceof sparqljs.Wildcard) return { termType: 'Wildcard', value: '*' };
  const out = {};
  for (const [key, child] of Object.entries(node)) out[key] = transferable(child);
  return out;
}

parentPort.on('message', (message) => {
  let reply;
  try {
    switch (message.type) {
      case 'analyze':
        reply = { ok: true, result: analysisOf(parse(message.text, message.baseIri), message.text) };
        break;
      case 'parse':
        reply = { ok: true, result: transferable(parse(message.text, message.baseIri)) };
        break;
      case 'instantiate':
        reply = { ok: true, result: instantiate(message) };
        break;
      case 'probe':
        reply = { ok: true, result: probe(message) };
        break;
      case 'withUsing':
        reply = { ok: true, result: withUsing(message) };
        break;
      case 'planLoads':
        reply = { ok: true, result: planLoads(message) };
        break;
      default:
        reply = { ok: false, error: `unknown message ${message.type}` };
    }
  } catch (error) {
    // A stack overflow says the text nests deeper than the parser's recursion goes, not that it is wrong.
    reply = { ok: false, error: String(error?.message ?? error), tooDeep: error instanceof RangeError && /call stack/.test(error.message) };
  }
  parentPort.postMessage({ id: message.id, ...reply });
});
