// One oxigraph store in a worker thread. Plain JavaScript so it runs unchanged under tsx, plain
// Node and in a Lambda bundle. oxigraph's query() is synchronous and cannot be interrupted, so
// the pool runs each store in its own thread and terminates the thread on timeout.
import { parentPort, receiveMessageOnPort } from 'node:worker_threads';
import * as oxigraph from 'oxigraph';
import { PREFIXES, rulesFor } from './reasoning-rules.mjs';

let store = new oxigraph.Store();

/** Materialisation rules, run to a fixpoint; inferred triples go to one named graph. */
const INFERRED = '<urn:x-platform:inferred>';

/**
 * A rule as an update: INSERT the head into the inferred graph for every match of the body
 * patterns across all graphs (updates see the store's real default graph, so each pattern gets
 * its own GRAPH).
 */
const toUpdate = ({ head, patterns, filter }) => {
  const body = patterns.map((p, i) => `GRAPH ?g${i} { ${p} }`).join(' ');
  return `${PREFIXES}
   INSERT { GRAPH ${INFERRED} { ${head} } } WHERE { ${body} ${filter ? `FILTER(${filter})` : ''} FILTER NOT EXISTS { GRAPH ?known { ${head} } } }`;
};

function reason(level, maxRounds) {
  const rules = rulesFor(level).map(toUpdate);
  const before = store.size;
  for (let round = 0; round < maxRounds && rules.length; round++) {
    const size = store.size;
    for (const r of rules) store.update(r);
    if (store.size === size) break;
  }
  return store.size - before;
}

function graphTerms(list) {
  return list.map((iri) => oxigraph.namedNode(iri));
}

parentPort.on('message', (message) => {
  // The stream port arrives in the transfer list of a loadStream message.
  try {
    switch (message.type) {
      case 'reset':
        store = new oxigraph.Store();
        parentPort.postMessage({ id: message.id, ok: true });
        break;
      case 'loadStream': {
        // One load call for the whole snapshot, so blank node labels keep one scope across
        // chunks (each load call has its own). Chunks arrive on `port`; this thread blocks on it
        // between chunks and acknowledges each as it takes it (the sender keeps a few ahead).
        const { port, sent } = message;
        function* chunks() {
          for (;;) {
            let received = receiveMessageOnPort(port);
            // `sent` counts the chunks posted; the sender notifies after each, so this wakes at
            // once (the timeout only bounds a wait if a notification were ever missed).
            while (!received) {
              const seen = Atomics.load(sent, 0);
              received = receiveMessageOnPort(port);
              if (!received) Atomics.wait(sent, 0, seen, 100);
            }
            const { chunk, done } = received.message;
            if (done) return;
            port.postMessage({ ack: true });
            yield chunk;
          }
        }
        try {
          // Data comes from our own canonical blobs: already validated, so skip the checks.
          store.load(chunks(), { format: 'application/n-quads', lenient: true, no_transaction: true });
          parentPort.postMessage({ id: message.id, ok: true });
        } finally {
          port.close();
        }
        break;
      }
      case 'apply': {
        // A sync's change (SnapshotChange): graphs dropped, then statements removed and added.
        // Never with blank nodes, so a statement parsed here is the one stored.
        for (const graph of message.dropGraphs) store.update(`DROP SILENT GRAPH ${graph}`);
        if (message.removed) for (const quad of oxigraph.parse(message.removed, { format: 'application/n-quads', lenient: true })) store.delete(quad);
        if (message.added) store.load(message.added, { format: 'application/n-quads', lenient: true, no_transaction: true });
        parentPort.postMessage({ id: message.id, ok: true, size: store.size });
        break;
      }
      case 'reason':
        parentPort.postMessage({ id: message.id, ok: true, inferred: reason(message.level, message.maxRounds ?? 50), size: store.size });
        break;
      case 'size':
        parentPort.postMessage({ id: message.id, ok: true, size: store.size });
        break;
      case 'query': {
        const options = { results_format: message.format, base_iri: message.baseIri };
        if (message.defaultGraphs || message.namedGraphs) {
          // The protocol's dataset (default-graph-uri / named-graph-uri) is the whole dataset:
          // what it does not list is not there.
          options.default_graph = graphTerms(message.defaultGraphs ?? []);
          options.named_graphs = graphTerms(message.namedGraphs ?? []);
        } else if (!message.queryDefinesDataset) {
          // No dataset given anywhere: the default graph is the union of all graphs.
          options.use_default_graph_as_union = true;
        }
        const result = store.query(message.query, options);
        parentPort.postMessage({ id: message.id, ok: true, result: typeof result === 'string' ? result : String(result) });
        break;
      }
      case 'update':
        store.update(message.update, { base_iri: message.baseIri });
        parentPort.postMessage({ id: message.id, ok: true, size: store.size });
        break;
      case 'dump': {
        // One graph at a time, as N-Triples, for writing a new dataset version after an update.
        const graph = message.graph === null ? oxigraph.defaultGraph() : oxigraph.namedNode(message.graph);
        parentPort.postMessage({ id: message.id, ok: true, result: store.dump({ format: 'application/n-triples', from_graph_name: graph }) });
        break;
      }
      case 'graphs': {
        const names = store.query('SELECT DISTINCT ?g WHERE { GRAPH ?g { ?s ?p ?o } }').map((b) => b.get('g').value);
        const hasDefault = store.query('ASK { ?s ?p ?o }');
        parentPort.postMessage({ id: message.id, ok: true, graphs: names, hasDefault });
        break;
      }
      default:
        parentPort.postMessage({ id: message.id, ok: false, error: `unknown message ${message.type}` });
    }
  } catch (error) {
    parentPort.postMessage({ id: message.id, ok: false, fatal: isTrap(error), error: String(error?.message ?? error) });
  }
});

/**
 * Whether the error left the engine unusable: a WebAssembly trap ("memory access out of bounds",
 * "unreachable" after a Rust panic) or a stack overflow inside it (deep recursion over a long
 * expression or pattern list). oxigraph's state is then undefined (measured: every later query
 * on the store traps too), so the pool replaces this thread rather than reuse it.
 */
function isTrap(error) {
  if (error instanceof WebAssembly.RuntimeError || error instanceof RangeError) return true;
  return /unreachable|memory access out of bounds|panicked/i.test(String(error?.message ?? ''));
}
