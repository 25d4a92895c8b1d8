/**
 * An import's worker threads (started through import-worker.mjs by import-pool.ts), two per
 * running import, one per core: the parse worker parses the job's files and sorts the statements
 * into graphs as canonical lines, encoded as UTF-8 (GraphTextSorter); the distinct-lines worker
 * drops the lines each graph already holds (DistinctLines), and hands the new lines to the
 * main thread as UTF-8 bytes. So parsing and de-duplication overlap, and the main thread keeps to
 * I/O (reading the upload, gzip, storing blobs) and answering requests.
 *
 * The messages are described in import-protocol.ts.
 */
import { type MessagePort, parentPort } from 'node:worker_threads';
import { formatByName } from '../formats.js';
import { parseRdf, RdfSyntaxError } from '../parse.js';
import { DistinctLines, GraphLimitError, GraphTextSorter } from './graph-lines.js';
import type { ImportStageMessage, ImportWorkerError, ImportWorkerFile, ImportWorkerReply, ImportWorkerRequest } from './import-protocol.js';

function describeError(e: unknown): ImportWorkerError {
  if (e instanceof RdfSyntaxError) {
    return { name: e.name, message: e.message, detail: e.detail, kind: e.kind, line: e.line, column: e.column, fileName: e.fileName };
  }
  if (e instanceof GraphLimitError) return { name: e.name, message: e.message, limit: e.limit };
  return { name: (e as Error)?.name ?? 'Error', message: String((e as Error)?.message ?? e) };
}

/** Chunks the parent sent for the current file, pulled by the parser. */
class ChunkQueue implements AsyncIterable<Uint8Array> {
  private readonly chunks: Uint8Array[] = [];
  private ended = false;
  private wake: (() => void) | null = null;

  constructor(private readonly taken: () => void) {}

  push(chunk: Uint8Array): void {
    this.chunks.push(chunk);
    this.wake?.();
  }

  end(): void {
    this.ended = true;
    this.wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<Uint8Array> {
    for (;;) {
      const chunk = this.chunks.shift();
      if (chunk) {
        this.taken();
        yield chunk;
        continue;
      }
      if (this.ended) return;
      await new Promise<void>((resolve) => (this.wake = resolve));
      this.wake = null;
    }
  }
}

/** The bytes of a byte string, in a buffer of their own (so that it can be transferred). */
function latin1Bytes(text: string): Uint8Array {
  const bytes = Buffer.from(text, 'latin1');
  return bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? bytes : new Uint8Array(bytes);
}

/** Texts the parse worker keeps ahead of the distinct-lines worker. */
const TEXTS_AHEAD = 8;

const port = parentPort;
if (port) {
  let role: 'parse' | 'distinct' | null = null;
  let stage: MessagePort | null = null;
  let sorter: GraphTextSorter | null = null;
  let distinct: DistinctLines | null = null;
  let queue: ChunkQueue | null = null;
  let failed = false;
  let parsed = 0;
  let ahead = 0;
  let tookWaiter: (() => void) | null = null;
  const post = (reply: ImportWorkerReply, transfer?: ArrayBuffer[]) => port.postMessage(reply, transfer ?? []);
  const toStage = (message: ImportStageMessage, transfer: ArrayBuffer[] = []) => stage?.postMessage(message, transfer);
  const encoder = new TextEncoder();
  const fail = (e: unknown) => {
    if (failed) return;
    failed = true;
    queue = null;
    post({ type: 'failed', error: describeError(e) });
  };

  const parseFile = async (file: ImportWorkerFile, input: ChunkQueue) => {
    let statements = 0;
    try {
      // N-Triples and N-Quads as byte strings: the bytes that came in go out, never decoded and encoded again.
      const byteStrings = file.format === 'ntriples' || file.format === 'nquads';
      sorter!.byteStrings = byteStrings;
      const batches = parseRdf(input, { format: formatByName(file.format), baseIRI: file.baseIRI, blankNodePrefix: file.blankNodePrefix, fileName: file.fileName, byteStrings });
      for await (const batch of batches) {
        if (failed) return;
        sorter!.add(batch);
        statements += batch.length;
        parsed += batch.length;
        while (ahead > TEXTS_AHEAD && !failed) await new Promise<void>((resolve) => (tookWaiter = resolve));
      }
      // Text of one file is handed on before the next file's, which may be read the other way.
      if (!failed) sorter!.flush();
      if (!failed) post({ type: 'fileDone', statements });
    } catch (e) {
      fail(e);
    }
  };

  const onStage = (m: ImportStageMessage) => {
    if (m.type === 'took') {
      ahead--;
      const wake = tookWaiter;
      tookWaiter = null;
      wake?.();
      return;
    }
    if (failed || !distinct) return;
    try {
      if (m.type === 'lines') {
        distinct.push(m.graphName, m.bytes);
        toStage({ type: 'took' });
      } else {
        post({ type: 'counts', counts: [...distinct.counts(m.order)] });
        distinct = null;
      }
    } catch (e) {
      fail(e);
    }
  };

  port.on('message', (m: ImportWorkerRequest) => {
    if (m.type === 'begin') {
      stage?.close();
      failed = false;
      parsed = 0;
      ahead = 0;
      queue = null;
      role = m.role;
      stage = m.port;
      stage.on('message', onStage);
      if (m.role === 'parse') {
        distinct = null;
        // Bytes cross to the other worker without a copy (a string would be copied, costing about as much as encoding it).
        sorter = new GraphTextSorter(m.defaultGraphName, m.maxGraphs, (graphName, text) => {
          ahead++;
          const bytes = sorter!.byteStrings ? latin1Bytes(text) : encoder.encode(text);
          toStage({ type: 'lines', graphName, bytes }, [bytes.buffer as ArrayBuffer]);
        });
      } else {
        sorter = null;
        distinct = new DistinctLines((graphName, bytes, lines) => post({ type: 'lines', graphName, bytes, lines }, [bytes.buffer as ArrayBuffer]));
      }
      return;
    }
    if (failed || role !== 'parse' || !sorter) return;
    switch (m.type) {
      case 'file': {
        const input = new ChunkQueue(() => {
          post({ type: 'ack', statements: parsed });
          parsed = 0;
        });
        queue = input;
        void parseFile(m, input);
        return;
      }
      case 'chunk':
        queue?.push(m.bytes);
        return;
      case 'endFile':
        queue?.end();
        queue = null;
        return;
      case 'finish':
        try {
          toStage({ type: 'finish', order: sorter.finish() });
        } catch (e) {
          fail(e);
        }
        sorter = null;
        return;
    }
  });
}
