/**
 * gzip decompression of files users send (imports, Load from URL, SHACL shapes), with clear
 * errors for truncated and non-gzip data and caps that make a gzip bomb fail fast with flat
 * memory: a total decompressed size, and a compression ratio no real RDF file reaches.
 */
import { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { ValidationError } from '../shared/errors.js';

export interface GunzipLimits {
  /** Decompressed bytes of one file at most. */
  maxBytes: number;
  /** Decompressed bytes per compressed byte at most, checked once `ratioAfterBytes` came out. */
  maxRatio: number;
  ratioAfterBytes: number;
}

/**
 * 20 GiB (the download limit), 1,000:1 after the first 16 MiB. Deflate cannot exceed about
 * 1,032:1; real RDF compresses 5–400:1 (a file of one repeated N-Triples line: 343:1).
 */
export const DEFAULT_GUNZIP_LIMITS: GunzipLimits = {
  maxBytes: 20 * 1024 * 1024 * 1024,
  maxRatio: 1000,
  ratioAfterBytes: 16 * 1024 * 1024,
};

/** Whether a file's first bytes are gzip's magic number (for files whose name does not say so). */
export const startsLikeGzip = (head: Uint8Array | undefined): boolean => head !== undefined && head[0] === 0x1f && head[1] === 0x8b;

const GIB = 1024 * 1024 * 1024;
const describeBytes = (bytes: number) => (bytes >= GIB ? `${bytes / GIB} GiB` : `${Math.round(bytes / (1024 * 1024))} MiB`);

/** The decompressed bytes of `source`; errors are ValidationErrors that name `fileName`. */
export async function* gunzipChecked(
  source: AsyncIterable<Buffer | Uint8Array | string>,
  fileName: string,
  limits: GunzipLimits = DEFAULT_GUNZIP_LIMITS,
): AsyncGenerator<Buffer> {
  const gunzip = createGunzip();
  const input = Readable.from(source, { objectMode: false });
  // pipe() does not pass a failing source on: end the decompression with its error.
  input.on('error', (e) => gunzip.destroy(e));
  input.pipe(gunzip);
  let produced = 0;
  try {
    for await (const chunk of gunzip as AsyncIterable<Buffer>) {
      produced += chunk.length;
      if (produced > limits.maxBytes) {
        throw new ValidationError(`${fileName}: decompresses to more than ${describeBytes(limits.maxBytes)}, more than one import file may hold; split it into several files.`);
      }
      if (produced > limits.ratioAfterBytes && produced / Math.max(1, gunzip.bytesWritten) > limits.maxRatio) {
        throw new ValidationError(
          `${fileName}: refused as a probable gzip bomb: ${describeBytes(produced)} came out of ${gunzip.bytesWritten} compressed bytes, more than ${limits.maxRatio}:1.`,
        );
      }
      yield chunk;
    }
  } catch (e) {
    throw gzipError(e, fileName, produced);
  } finally {
    input.unpipe(gunzip);
    input.destroy();
    gunzip.destroy();
  }
}

function gzipError(e: unknown, fileName: string, produced: number): unknown {
  const code = (e as { code?: string })?.code;
  if (code === 'Z_BUF_ERROR') {
    return new ValidationError(`${fileName}: the gzip file is truncated (it ends inside the compressed data after ${produced} decompressed bytes); send the whole file.`);
  }
  if (code === 'Z_DATA_ERROR' || code === 'Z_NEED_DICT' || code === 'Z_STREAM_ERROR') {
    if (produced === 0) {
      return new ValidationError(`${fileName} is not gzip data: send it uncompressed without the .gz ending, or compress it with gzip.`);
    }
    return new ValidationError(`${fileName}: the gzip data is corrupt after ${produced} decompressed bytes (${(e as Error).message}).`);
  }
  return e;
}
