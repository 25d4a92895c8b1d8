import { FileStore } from '@tus/file-store';
import { Server } from '@tus/server';
import { randomBytes } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import { DomainError, type DomainErrorKind } from '../../domain/shared/errors.js';
import type { FinishedUpload, ResumableUploads, UnfinishedUpload } from '../../ports/resumable-uploads.js';

const STATUS_OF: Partial<Record<DomainErrorKind, number>> = { 'not-found': 404, conflict: 409, forbidden: 403, 'too-large': 413 };

type Context = Parameters<ResumableUploads['handle']>[1];

/** Folder inside the uploads blob store where tus keeps its files (`<id>` and `<id>.json`). */
export const TUS_PREFIX = 'tus';

/**
 * tus 1.0.0 with the @tus/server library over a folder of the embedded runtime's uploads store.
 * Each request carries its scope (the job's or assets' upload path); ids are 32 hex characters
 * as TriplyDB's client expects, and an upload is only reachable under the scope it was created in.
 */
export class TusUploads implements ResumableUploads {
  private readonly contexts = new WeakMap<Request, Context>();
  private readonly store: FileStore;
  private readonly server: Server;

  constructor(
    private readonly uploadsDir: string,
    options: { maxSize: number },
  ) {
    this.store = new FileStore({ directory: uploadsDir });
    this.server = new Server({
      path: '/uploads',
      datastore: this.store,
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
        const raw = upload.metadata?.filename ?? upload.metadata?.name ?? upload.id;
        const finished: FinishedUpload = {
          uploadId: upload.id,
          // The TriplyDB client sends the whole local path; keep the last segment.
          fileName: raw.split(/[\\/]/).pop() || upload.id,
          size: upload.size ?? upload.offset,
          blobKey: `${TUS_PREFIX}/${upload.id}`,
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

  async unfinished(scopeSuffix: string): Promise<UnfinishedUpload[]> {
    let names: string[];
    try {
      names = await readdir(this.uploadsDir);
    } catch {
      return []; // no upload was ever made
    }
    const result: UnfinishedUpload[] = [];
    for (const name of names) {
      const id = /^([0-9a-f]{32})\.json$/.exec(name)?.[1];
      // A file already taken by its job (or deleted) is gone: not unfinished.
      const upload = id ? await this.store.getUpload(id).catch(() => null) : null;
      if (!upload || !upload.metadata?.scope?.endsWith(scopeSuffix)) continue;
      if (upload.size !== undefined && upload.offset >= upload.size) continue;
      const raw = upload.metadata?.filename ?? upload.metadata?.name ?? upload.id;
      result.push({ fileName: raw.split(/[\\/]/).pop() || upload.id, offset: upload.offset, size: upload.size });
    }
    return result;
  }

  async handle(request: Request, context: Context): Promise<Response> {
    if (request.method !== 'POST' && request.method !== 'OPTIONS') {
      const id = new URL(request.url).pathname.split('/').pop() ?? '';
      const upload = /^[0-9a-f]{32}$/.test(id) ? await this.store.getUpload(id).catch(() => null) : null;
      if (!upload || upload.metadata?.scope !== context.scope) {
        return new Response('Upload not found\n', { status: 404, headers: { 'Tus-Resumable': '1.0.0' } });
      }
    }
    this.contexts.set(request, context);
    return this.server.handleWeb(request);
  }
}
