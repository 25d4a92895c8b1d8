/**
 * A local HTTP source for URL imports that takes as long as a test needs (127.0.0.1, port 0):
 * `GET /slow.nt` sends a few N-Triples statements every `intervalMs` until the test calls
 * `release()` (or `maxChunks` were sent: bounded), then ends, so a test can watch an import's
 * progress while it runs without timing anything. `GET /big.nt?bytes=N[&line=L]` sends N bytes
 * (rounded up to whole lines) of N-Triples, one statement per line of L bytes (default 1 KiB),
 * generated as it goes, never held in memory. Every
 * response can be cut off with `hang()` (the connection stays open, nothing more is sent).
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SlowSource {
  url: string;
  /** Statements and bytes sent so far by /slow.nt responses. */
  statements(): number;
  bytes(): number;
  /** Lets /slow.nt responses end (after the chunk under way). */
  release(): void;
  /** Responses of /slow.nt keep their connection and send nothing more (until stop). */
  hang(): void;
  stop(): Promise<void>;
}

export const LINE_BYTES = 1024;

/** One N-Triples line of exactly `size` bytes (with its newline). */
export function paddedLine(i: number, size = LINE_BYTES): string {
  const head = `<https://example.org/s${i}> <https://example.org/p> "`;
  const tail = '" .\n';
  return head + 'x'.repeat(size - head.length - tail.length) + tail;
}

export async function startSlowSource(options: { intervalMs?: number; perChunk?: number; maxChunks?: number } = {}): Promise<SlowSource> {
  const intervalMs = options.intervalMs ?? 100;
  const perChunk = options.perChunk ?? 10;
  const maxChunks = options.maxChunks ?? 1200;
  let released = false;
  let hanging = false;
  let sent = 0;
  let sentBytes = 0;
  const open = new Set<ServerResponse>();
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    open.add(res);
    res.on('close', () => open.delete(res));
    // A reader that went away (a worker task stopped mid-download) is no error of the source.
    res.on('error', () => {});
    req.socket.on('error', () => {});
    if (url.pathname === '/slow.nt') {
      res.writeHead(200, { 'content-type': 'application/n-triples' });
      let chunk = 0;
      const tick = () => {
        if (hanging || res.destroyed || res.writableEnded) return;
        const lines = Array.from({ length: perChunk }, (_, k) => `<https://example.org/slow/${chunk}-${k}> <https://example.org/p> "${chunk}-${k}" .\n`).join('');
        sent += perChunk;
        sentBytes += Buffer.byteLength(lines);
        chunk++;
        res.write(lines);
        if (released || chunk >= maxChunks) res.end();
        else setTimeout(tick, intervalMs);
      };
      tick();
      return;
    }
    if (url.pathname === '/big.nt') {
      const bytes = Number(url.searchParams.get('bytes'));
      const size = Number(url.searchParams.get('line') ?? LINE_BYTES);
      const lines = Math.ceil(bytes / size);
      res.writeHead(200, { 'content-type': 'application/n-triples', 'content-length': String(lines * size) });
      // About 256 KiB per write; wait for drain when the socket is full.
      const perWrite = Math.max(1, Math.floor(262_144 / size));
      let i = 0;
      const pump = () => {
        while (i < lines && !hanging) {
          const batch = Array.from({ length: Math.min(perWrite, lines - i) }, (_, k) => paddedLine(i + k, size)).join('');
          i += perWrite;
          if (!res.write(batch)) return void res.once('drain', pump);
        }
        if (!hanging) res.end();
      };
      pump();
      return;
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    statements: () => sent,
    bytes: () => sentBytes,
    release: () => {
      released = true;
    },
    hang: () => {
      hanging = true;
    },
    stop: async () => {
      for (const res of open) res.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}
