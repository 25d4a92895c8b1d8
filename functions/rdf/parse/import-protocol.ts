/**
 * Messages between the main thread (import-pool.ts) and an import's two worker threads
 * (import-worker.ts): the parse worker (parsing, sorting statements into graphs as UTF-8 lines) and the
 * distinct-lines worker (UTF-8 bytes, duplicates dropped). In order:
 *   parent → parse worker: begin {role 'parse', defaultGraphName, maxGraphs, port} · file
 *     {format, baseIRI, blankNodePrefix, fileName} · chunk {bytes} · endFile · finish
 *   parent → distinct-lines worker: begin {role 'distinct', port}
 *   parse worker → parent: ack {statements} when the parser took a chunk (the parent sends a few
 *     chunks ahead, no more) · fileDone · failed {error}
 *   parse worker → distinct-lines worker (on `port`): lines {graphName, bytes} · finish {order}
 *   distinct-lines worker → parse worker: took (the parse worker keeps a few texts ahead, no more)
 *   distinct-lines worker → parent: lines {graphName, bytes, lines} · counts {counts} · failed {error}
 * After `failed` a worker takes nothing but a new `begin`.
 */
import type { MessagePort } from 'node:worker_threads';
import type { RdfFormatName } from '../formats.js';

export interface ImportWorkerFile {
  format: RdfFormatName;
  baseIRI?: string;
  blankNodePrefix: string;
  fileName: string;
}

export type ImportWorkerRequest =
  | { type: 'begin'; role: 'parse'; defaultGraphName: string; maxGraphs: number; port: MessagePort }
  | { type: 'begin'; role: 'distinct'; port: MessagePort }
  | ({ type: 'file' } & ImportWorkerFile)
  | { type: 'chunk'; bytes: Uint8Array }
  | { type: 'endFile' }
  | { type: 'finish' };

/** Between the two workers. */
export type ImportStageMessage = { type: 'lines'; graphName: string; bytes: Uint8Array } | { type: 'finish'; order: string[] } | { type: 'took' };

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
