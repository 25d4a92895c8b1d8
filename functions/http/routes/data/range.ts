import { Readable } from 'node:stream';

/** One byte range of a file of `size` bytes, inclusive; RFC 9110 §14.1.2. */
export interface ByteRange {
  start: number;
  end: number;
}

/**
 * The `Range` header of a GET: null when absent or not a single `bytes=` range (the whole file is
 * sent, as RFC 9110 allows for ranges a server does not support); 'unsatisfiable' when no byte
 * of it lies in the file (416). Several ranges are answered with the whole file too (no multipart/byteranges).
 */
export function parseRange(header: string | undefined, size: number): ByteRange | 'unsatisfiable' | null {
  if (!header) return null;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (m[1] === '' && m[2] === '')) return null;
  if (m[1] === '') {
    const suffix = Number(m[2]);
    if (suffix === 0 || size === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(m[1]);
  const end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  // A range whose last byte comes before its first is invalid: ignored, as RFC 9110 §14.2 lets a server do.
  if (m[2] !== '' && Number(m[2]) < start) return null;
  if (start >= size) return 'unsatisfiable';
  return { start, end };
}

/** The bytes `start..end` (inclusive) of a stream; the rest is not read. */
export function sliceStream(body: Readable, range: ByteRange): Readable {
  async function* slice() {
    let at = 0;
    try {
      for await (const chunk of body) {
        const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array);
        const from = Math.max(0, range.start - at);
        const to = Math.min(buffer.length, range.end + 1 - at);
        at += buffer.length;
        if (to > from) yield buffer.subarray(from, to);
        if (at > range.end) break;
      }
    } finally {
      body.destroy();
    }
  }
  return Readable.from(slice(), { objectMode: false });
}
