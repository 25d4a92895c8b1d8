import { readFile, stat } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { extname, join, normalize, sep } from 'node:path';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

/**
 * The console's static files (issue 17) on the embedded platform: the Vite build of console/ served
 * at /console. On AWS the same build sits in S3 behind CloudFront (lib/constructs/console-site.ts).
 * Files are read once and kept compressed (brotli, gzip) in memory: the build is small and fixed
 * for the process's life. Hashed assets are cached for a year; index.html is revalidated.
 */
export const CONSOLE_PATH = '/console';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
};
const COMPRESSIBLE = new Set(['.html', '.js', '.css', '.svg', '.json', '.txt']);

/**
 * What the console may load: only its own scripts and styles (React sets inline style attributes,
 * the flow canvas too), and it talks only to the API on the same origin.
 */
export const CONSOLE_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; " +
  "connect-src 'self'; frame-ancestors 'none'; base-uri 'self'; form-action 'self'; object-src 'none'";

interface CachedFile {
  raw: Buffer;
  br?: Buffer;
  gzip?: Buffer;
  type: string;
  immutable: boolean;
}

/**
 * A request handler for /console and below, or `false` for any other path (the API's routes).
 * A missing build answers 503 saying how to build it; unknown paths below /console get index.html
 * (the console routes with the URL's hash, so this only catches mistyped links).
 */
export function consoleStatic(dir: string) {
  const cache = new Map<string, CachedFile>();

  async function load(relative: string): Promise<CachedFile | undefined> {
    const hit = cache.get(relative);
    if (hit) return hit;
    const path = normalize(join(dir, relative));
    if (path !== dir && !path.startsWith(dir.endsWith(sep) ? dir : dir + sep)) return undefined;
    const info = await stat(path).catch(() => undefined);
    if (!info?.isFile()) return undefined;
    const raw = await readFile(path);
    const ext = extname(path);
    const file: CachedFile = { raw, type: TYPES[ext] ?? 'application/octet-stream', immutable: relative.startsWith('assets/') };
    if (COMPRESSIBLE.has(ext) && raw.length > 512) {
      file.br = brotliCompressSync(raw, { params: { [constants.BROTLI_PARAM_QUALITY]: 9 } });
      file.gzip = gzipSync(raw, { level: 9 });
    }
    cache.set(relative, file);
    return file;
  }

  return async (req: IncomingMessage, res: ServerResponse, method: string, pathname: string): Promise<boolean> => {
    if (pathname !== CONSOLE_PATH && !pathname.startsWith(`${CONSOLE_PATH}/`)) return false;
    if (method !== 'GET' && method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'application/json' });
      res.end(JSON.stringify({ message: `${method} is not allowed here; the console's files are read with GET.` }));
      return true;
    }
    if (pathname === CONSOLE_PATH) {
      res.writeHead(308, { location: `${CONSOLE_PATH}/` });
      res.end();
      return true;
    }
    let relative: string;
    try {
      relative = decodeURIComponent(pathname.slice(CONSOLE_PATH.length + 1)) || 'index.html';
    } catch {
      relative = 'index.html';
    }
    const file = (await load(relative)) ?? (relative.startsWith('assets/') ? undefined : await load('index.html'));
    if (!file) {
      const built = await load('index.html');
      res.writeHead(built ? 404 : 503, { 'content-type': 'application/json', 'cache-control': 'no-store' });
      res.end(JSON.stringify({ message: built ? `No console file at ${pathname}.` : 'The console is not built: run `npm start` (it builds it) or `npx tsx bin/console-build.ts`.' }));
      return true;
    }
    const accepts = String(req.headers['accept-encoding'] ?? '');
    const encoding = file.br && /\bbr\b/.test(accepts) ? 'br' : file.gzip && /\bgzip\b/.test(accepts) ? 'gzip' : undefined;
    const body = encoding === 'br' ? file.br! : encoding === 'gzip' ? file.gzip! : file.raw;
    const headers: Record<string, string> = {
      'content-type': file.type,
      'content-length': String(body.length),
      'cache-control': file.immutable ? 'public, max-age=31536000, immutable' : 'no-cache',
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'same-origin',
      vary: 'accept-encoding',
    };
    if (encoding) headers['content-encoding'] = encoding;
    if (file.type.startsWith('text/html')) headers['content-security-policy'] = CONSOLE_CSP;
    res.writeHead(200, headers);
    res.end(method === 'HEAD' ? undefined : body);
    return true;
  };
}

export type ConsoleStatic = ReturnType<typeof consoleStatic>;
