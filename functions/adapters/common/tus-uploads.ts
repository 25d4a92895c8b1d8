import { Server, type DataStore, type Upload } from '@tus/server';
import { randomBytes } from 'node:crypto';
import { DomainError, type DomainErrorKind } from '../../domain/shared/errors.js';
import type { FinishedUpload, ResumableUploads, UnfinishedUpload } from '../../ports/resumable-uploads.js';

const STATUS_OF: Partial<Record<DomainErrorKind, number>> = { 'not-found': 404, conflict: 409, forbidden: 403, 'too-large': 413 };

type Context = Parameters<ResumableUploads['handle']>[1];

/**
 * Folder (key prefix) of the uploads blob store where tus keeps its uploads: the bytes at
 * `tus/<id>` (what imports and assets read as an ordinary blob) and the upload's state next to them
 * at `tus/<id>.json` (the file store's JSON; on S3 the store's info object, renamed to match).
 */
export const TUS_PREFIX = 'tus';

/** Largest resumable upload (imports and assets), on both runtimes. */
export const MAX_UPLOAD_BYTES = 50 * 1024 * 1024 * 1024;

/** tus upload ids: 32 hex characters, as TriplyDB's client expects. */
export const TUS_ID = /^[0-9a-f]{32}$/;

/** The key in the uploads store a finished upload's bytes are at. */
export const tusBlobKey = (id: string): string => `${TUS_PREFIX}/${id}`;

/** The client sends the whole local path as the file name; keep the last segment. */
const fileNameOf = (upload: Upload): string => {
  const raw = upload.metadata?.filename ?? upload.metadata?.name ?? upload.id;
  return raw.split(/[\\/]/).pop() || upload.id;
};

/**
 * tus 1.0.0 with the @tus/server library over a tus data store; the stores differ (files on the
 * laptop, S3 multipart on AWS), the rules do not. Each request carries its scope (the job's or
 * assets' upload path); an upload is only reachable under the scope it was created in, must name
 * its file in Upload-Metadata, and on its last byte is handed to the scope's `onFinish` with the
 * key its bytes are at (`tus/<id>`). Every request reads the upload's state from the store, so a
 * new instance (a restart, another process) resumes any upload the store holds.
 */
export abstract class TusUploadsBase implements ResumableUploads {
  private readonly contexts = new WeakMap<Request, Context>();
  private readonly server: Server;

  protected constructor(
    protected readonly store: DataStore,
    options: { maxSize: number },
  ) {
    this.server = new Server({
      path: '/uploads',
      datastore: store,
      maxSize: options.maxSize,
      namingFunction: () => randomBytes(16).toString('hex'),
      generateUrl: (req, { id }) => {
        const ctx = this.contexts.get(req as unknown as Request);
        return `${ctx?.baseUrl ?? ''}${ctx?.scope ?? ''}/${id}`;
      },
      onUploadCreate: async (req, upload) => {
        const ctx = this.contexts.get(req as unknown as Request);
        const fileName = upload.metadata?.filename ?? upload.metadata?.name;
        if (!fileName) throw { status_code: 400, body: 'Upload-Metadata must include a "filename".\n' };
        return { metadata: { ...upload.metadata, scope: ctx?.scope ?? '' } };
      },
      onUploadFinish: async (req, upload) => {
        const ctx = this.contexts.get(req as unknown as Request);
        if (!ctx) return {};
        const finished: FinishedUpload = {
          uploadId: upload.id,
          fileName: fileNameOf(upload),
          size: upload.size ?? upload.offset,
          blobKey: tusBlobKey(upload.id),
          metadata: Object.fromEntries(Object.entries(upload.metadata ?? {}).filter((e): e is [string, string] => typeof e[1] === 'string')),
        };
        try {
          const result = await ctx.onFinish(finished);
          return result?.body ? { status_code: 200, body: result.body, headers: result.headers } : {};
        } catch (e) {
          // tus answers `{status_code, body}` throws as they are; domain errors keep their message.
          if (e instanceof DomainError) throw { status_code: STATUS_OF[e.kind] ?? 400, body: `${e.message}\n` };
          throw e;
        }
      },
    });
  }

  /** Ids of every upload whose state the store holds (finished, taken or not). */
  protected abstract uploadIds(): AsyncIterable<string>;

  async unfinished(scopeSuffix: string): Promise<UnfinishedUpload[]> {
    const result: UnfinishedUpload[] = [];
    for await (const id of this.uploadIds()) {
      // An upload already taken by its job (or deleted) is gone: not unfinished.
      const upload = await this.store.getUpload(id).catch(() => null);
      if (!upload || !upload.metadata?.scope?.endsWith(scopeSuffix)) continue;
      if (upload.size !== undefined && upload.offset >= upload.size) continue;
      result.push({ fileName: fileNameOf(upload), offset: upload.offset, size: upload.size });
    }
    return result;
  }

  async handle(request: Request, context: Context): Promise<Response> {
    if (request.method !== 'POST' && request.method !== 'OPTIONS') {
      const id = new URL(request.url).pathname.split('/').pop() ?? '';
      const upload = TUS_ID.test(id) ? await this.store.getUpload(id).catch(() => null) : null;
      if (!upload || upload.metadata?.scope !== context.scope) {
        return new Response('Upload not found\n', { status: 404, headers: { 'Tus-Resumable': '1.0.0' } });
      }
    }
    this.contexts.set(request, context);
    return this.server.handleWeb(request);
  }
}
