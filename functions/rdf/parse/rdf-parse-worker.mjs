// oxigraph's JSON-LD and RDF/XML parsers (and its syntax diagnosis) run on untrusted uploads in
// this worker thread. A hostile file can make the WASM module trap ("capacity overflow",
// "memory access out of bounds"); after a trap the module's memory is corrupt for every later
// call in this thread, so the thread reports the failure and is thrown away, never reused. Plain
// JavaScript importing only oxigraph and Node built-ins, so it runs unchanged under tsx, plain
// Node and in a Lambda bundle (copied beside index.mjs by lib/constructs/app-function.ts).
//
// Protocol (one job at a time, strict lockstep, so memory stays flat): the parent sends
// `{ type, port, signal, ... }` with a MessagePort and a SharedArrayBuffer doorbell. Every message
// this thread posts on the port expects exactly one reply, and the thread blocks until it comes:
//   { type: 'need' }            -> { chunk: Uint8Array } | { done: true }
//   { type: 'quads', quads }    -> { ack: true }
// and ends a job with { type: 'end', ...result } or { type: 'error', message, trapped, panic }.
import { parentPort, receiveMessageOnPort } from 'node:worker_threads';
import * as oxigraph from 'oxigraph';

// A Rust panic is printed through console.error before the trap: keep its text for the message.
let lastPanic = '';
console.error = (...args) => {
  const text = args.map(String).join(' ');
  const m = /panicked at [^\n]*\n([^\n]+)/.exec(text);
  lastPanic = m ? m[1].trim() : text.split('\n')[0].slice(0, 200);
};

/** Blocks until the parent's next message on `port` (the parent rings `signal` after posting). */
function waitForReply(port, signal) {
  for (;;) {
    const seen = Atomics.load(signal, 0);
    const received = receiveMessageOnPort(port);
    if (received) return received.message;
    Atomics.wait(signal, 0, seen, 1000);
  }
}

/** A term as a plain object the parent turns into N-Triples (see rdfJsTermToNt). */
function plainTerm(t) {
  if (t.termType === 'Literal') {
    return { termType: 'Literal', value: t.value, language: t.language, direction: t.direction, datatype: { value: t.datatype.value } };
  }
  return { termType: t.termType, value: t.termType === 'Quad' || t.termType === 'DefaultGraph' ? '' : t.value };
}

function parseJob({ port, signal, format, baseIri, batchSize }) {
  function* chunks() {
    for (;;) {
      port.postMessage({ type: 'need' });
      const reply = waitForReply(port, signal);
      if (reply.done) return;
      yield reply.chunk;
    }
  }
  const options = { format, lenient: false, ...(baseIri ? { base_iri: baseIri } : {}) };
  let batch = [];
  const flush = () => {
    port.postMessage({ type: 'quads', quads: batch });
    batch = [];
    waitForReply(port, signal);
  };
  for (const q of oxigraph.parse(chunks(), options)) {
    batch.push({ subject: plainTerm(q.subject), predicate: plainTerm(q.predicate), object: plainTerm(q.object), graph: plainTerm(q.graph) });
    if (batch.length >= batchSize) flush();
  }
  if (batch.length > 0) flush();
  return {};
}

/** Parses one N-Triples / N-Quads line alone; the error message, or null when it parses. */
function diagnoseLine({ text, format }) {
  try {
    oxigraph.parse(`${text}\n`, { format, lenient: false });
    return { message: null };
  } catch (e) {
    if (e instanceof WebAssembly.RuntimeError) throw e;
    return { message: String(e?.message ?? e) };
  }
}

/**
 * Re-parses `data` in 4 KiB chunks to find the chunk where `message` shows up, then once more
 * feeding that chunk byte by byte; the byte offset where the parser stood, or null.
 */
function locate({ data, format, baseIri, message }) {
  const STEP = 4096;
  const options = { format, lenient: false, ...(baseIri ? { base_iri: baseIri } : {}) };
  const run = (fineFrom) => {
    let pos = 0;
    function* chunks() {
      while (pos < data.length) {
        const size = pos < fineFrom ? Math.min(STEP, fineFrom - pos) : pos < fineFrom + STEP ? 1 : STEP;
        const chunk = data.subarray(pos, pos + size);
        pos += size;
        yield chunk;
      }
    }
    try {
      for (const _q of oxigraph.parse(chunks(), options)) void _q;
      return null;
    } catch (e) {
      if (e instanceof WebAssembly.RuntimeError) throw e;
      return String(e?.message ?? e) === message ? pos : null;
    }
  };
  const coarse = run(Number.MAX_SAFE_INTEGER);
  if (coarse === null) return { offset: null };
  return { offset: run(Math.max(0, coarse - STEP)) ?? coarse };
}

const JOBS = { parse: parseJob, diagnoseLine, locate };

parentPort.on('message', (message) => {
  const { port } = message;
  lastPanic = '';
  try {
    port.postMessage({ type: 'end', ...JOBS[message.type](message) });
  } catch (error) {
    const trapped = error instanceof WebAssembly.RuntimeError;
    // After a trap the parent terminates this thread: the module's memory may be corrupt.
    port.postMessage({ type: 'error', message: String(error?.message ?? error), trapped, panic: trapped ? lastPanic : '' });
  } finally {
    port.close();
  }
});
