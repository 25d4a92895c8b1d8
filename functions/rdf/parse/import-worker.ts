/**
 * The import's parse worker (a worker thread, started through import-worker.mjs by
 * import-pool.ts): parses the files of one import job, sorts the statements into graphs and drops
 * duplicates (graph-lines.ts), and hands each graph's new canonical lines back as UTF-8 bytes, so
 * the main thread keeps to I/O (reading the upload, gzip, storing blobs) and answering requests.
 *
 * The messages are described in import-protocol.ts.
 */
import { parentPort } from 'node:worker_threads';
import { formatByName } from '../formats.js';
import { parseRdf, RdfSyntaxError } from '../parse.js';
import { GraphLimitError, GraphLineSorter } from './graph-lines.js';
import type { ImportWorkerError, ImportWorkerFile, ImportWorkerReply, ImportWorkerRequest } from './import-protocol.js';

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

const port = parentPort;
if (port) {
  let sorter: GraphLineSorter | null = null;
  let queue: ChunkQueue | null = null;
  let failed = false;
  let parsed = 0;
  const post = (reply: ImportWorkerReply, transfer?: ArrayBuffer[]) => port.postMessage(reply, transfer ?? []);
  const fail = (e: unknown) => {
    if (failed) return;
    failed = true;
    queue = null;
    post({ type: 'failed', error: describeError(e) });
  };

  const parseFile = async (file: ImportWorkerFile, input: ChunkQueue) => {
    let statements = 0;
    try {
      const batches = parseRdf(input, { format: formatByName(file.format), baseIRI: file.baseIRI, blankNodePrefix: file.blankNodePrefix, fileName: file.fileName });
      for await (const batch of batches) {
        if (failed) return;
        sorter!.add(batch);
        statements += batch.length;
        parsed += batch.length;
      }
      if (!failed) post({ type: 'fileDone', statements });
    } catch (e) {
      fail(e);
    }
  };

  port.on('message', (m: ImportWorkerRequest) => {
    if (m.type === 'begin') {
      failed = false;
      parsed = 0;
      queue = null;
      sorter = new GraphLineSorter(m.defaultGraphName, m.maxGraphs, (graphName, bytes, lines) =>
        post({ type: 'lines', graphName, bytes, lines }, [bytes.buffer as ArrayBuffer]),
      );
      return;
    }
    if (failed || !sorter) return;
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
          post({ type: 'counts', counts: [...sorter.finish()] });
        } catch (e) {
          fail(e);
        }
        sorter = null;
        return;
    }
  });
}
