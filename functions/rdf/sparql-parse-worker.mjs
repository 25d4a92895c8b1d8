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

function analysisOf(tree) {
  if (tree.type === 'update') return { kind: 'update' };
  return {
    kind: 'query',
    form: tree.queryType.toLowerCase(),
    definesDataset: (tree.from?.default?.length ?? 0) + (tree.from?.named?.length ?? 0) > 0,
  };
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
  const ast = { ...substitute(parse(text), termsOf(values)) };
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
  return new sparqljs.Generator().stringify(ast);
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
        reply = { ok: true, result: analysisOf(parse(message.text, message.baseIri)) };
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
      default:
        reply = { ok: false, error: `unknown message ${message.type}` };
    }
  } catch (error) {
    reply = { ok: false, error: String(error?.message ?? error) };
  }
  parentPort.postMessage({ id: message.id, ...reply });
});
