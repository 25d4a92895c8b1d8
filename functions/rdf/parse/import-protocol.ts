/**
 * Messages between an import's parse worker (import-worker.ts) and the main thread
 * (import-pool.ts), in order:
 *   parent → worker: begin {defaultGraphName, maxGraphs} · file {format, baseIRI, blankNodePrefix,
 *     fileName} · chunk {bytes} · endFile · finish
 *   worker → parent: ack {statements} when the parser took a chunk (the parent sends a few chunks
 *     ahead, no more) · lines {graphName, bytes, lines} · fileDone · counts {counts} · failed {error}
 * After `failed` the worker takes nothing but a new `begin`.
 */
import type { RdfFormatName } from '../formats.js';

export interface ImportWorkerFile {
  format: RdfFormatName;
  baseIRI?: string;
  blankNodePrefix: string;
  fileName: string;
}

export type ImportWorkerRequest =
  | { type: 'begin'; defaultGraphName: string; maxGraphs: number }
  | ({ type: 'file' } & ImportWorkerFile)
  | { type: 'chunk'; bytes: Uint8Array }
  | { type: 'endFile' }
  | { type: 'finish' };

/** An error crossing the thread boundary. */
export interface ImportWorkerError {
  name: string;
  message: string;
  detail?: string;
  kind?: string;
  line?: number;
  column?: number;
  fileName?: string;
  limit?: number;
}

export type ImportWorkerReply =
  | { type: 'ack'; statements: number }
  | { type: 'lines'; graphName: string; bytes: Uint8Array; lines: number }
  | { type: 'fileDone'; statements: number }
  | { type: 'counts'; counts: [string, number][] }
  | { type: 'failed'; error: ImportWorkerError };
