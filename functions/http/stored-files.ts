import type { Readable } from 'node:stream';
import type { BlobStore } from '../ports/blob-store.js';
import type { HttpResponse } from './types.js';

/** How long a download link stays valid: long enough to start, short enough not to be shared. */
export const DOWNLOAD_URL_SECONDS = 300;

/** Content-Disposition that survives any file name. */
export const attachment = (name: string) => `attachment; filename="${name.replace(/[^\x20-\x7e]|"/g, '_')}"; filename*=UTF-8''${encodeURIComponent(name)}`;

export interface StoredFile {
  /** The blob's key in `store`. */
  key: string;
  fileName: string;
  contentType: string;
  size: number;
}

/**
 * A stored file (asset, artifact) as a response. Where the store hands out short-lived links (S3
 * on AWS) the answer is a redirect to one, so the bytes never pass through a function (nothing is
 * buffered, no response limit applies); elsewhere (the embedded filesystem store) the file streams.
 * `open` is called only when the file streams.
 */
export async function storedFileResponse(store: BlobStore, file: StoredFile, open: () => Promise<Readable>): Promise<HttpResponse> {
  const disposition = attachment(file.fileName);
  if (store.signedUrl) {
    const location = await store.signedUrl(file.key, DOWNLOAD_URL_SECONDS, { contentType: file.contentType, contentDisposition: disposition });
    return { status: 302, headers: { location, 'cache-control': 'private, no-store' } };
  }
  return {
    status: 200,
    headers: { 'content-type': file.contentType, 'content-length': String(file.size), 'content-disposition': disposition },
    body: await open(),
  };
}
