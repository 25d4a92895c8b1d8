import type { Readable } from 'node:stream';
import { assetView, type AssetRecord, type AssetVersion } from '../../../domain/data/assets.js';
import { ValidationError } from '../../../domain/shared/errors.js';
import { SIMPLE_UPLOAD_LIMIT } from '../../../domain/data/import-service.js';
import type { OperationContext, Operations } from '../../api.js';
import { jsonResponse } from '../../errors.js';
import { allowQueryParams, checkQueryParams } from '../../query-params.js';
import type { HttpResponse } from '../../types.js';
import { singleQueryParam } from '../../request.js';
import { storedFileResponse } from '../../stored-files.js';
import { fromWebResponse, isMultipart, receiveMultipart, toWebRequest } from '../../uploads.js';
import { parseRange, sliceStream } from './range.js';

const datasetUrl = (ctx: OperationContext) => `${ctx.apiUrl}/datasets/${ctx.params.account}/${ctx.params.dataset}`;

const TOO_LARGE =
  'The simple upload route takes assets under 5 MB. Upload larger files with tus 1.0.0 to /datasets/{account}/{dataset}/assets/add (Upload-Metadata: filename, optional versionOf).';

export const assetOperations: Operations = checkQueryParams({
  /** All assets (paginated by the client as one page), or with `?fileName=` the one asset of that name. */
  async listAssets(ctx) {
    const fileName = singleQueryParam(ctx.req, 'fileName');
    if (fileName !== null) {
      const { asset } = await ctx.services.assets.byName(ctx.caller, ctx.params.account!, ctx.params.dataset!, fileName);
      return jsonResponse(200, assetView(asset, datasetUrl(ctx)));
    }
    const { assets } = await ctx.services.assets.list(ctx.caller, ctx.params.account!, ctx.params.dataset!);
    return jsonResponse(200, assets.map((a) => assetView(a, datasetUrl(ctx))));
  },

  /** Multipart upload under 5 MB: field `file`, optional field `versionOf`. */
  async uploadAsset(ctx) {
    const { services, caller, params } = ctx;
    if (!isMultipart(ctx.req)) throw new ValidationError('Send the asset as multipart/form-data with a "file" field (or use tus at .../assets/add).');
    const { dataset } = await services.assets.writable(caller, params.account!, params.dataset!);
    const received = await receiveMultipart(ctx.req, services.platform.blobs.uploads, 'incoming/', services.platform.ids.newId, SIMPLE_UPLOAD_LIMIT, TOO_LARGE);
    try {
      if (received.files.length !== 1) throw new ValidationError('Send exactly one file in the "file" field.');
      const file = received.files[0]!;
      const asset = await services.assets.store(
        dataset,
        { fileName: received.fields.fileName || file.fileName, size: file.size, uploadKey: file.blobKey, contentType: file.contentType },
        received.fields.versionOf || undefined,
        ctx.apiUrl,
      );
      return jsonResponse(201, assetView(asset, datasetUrl(ctx)));
    } finally {
      for (const f of received.files) await services.platform.blobs.uploads.delete(f.blobKey).catch(() => {});
    }
  },

  /** tus: the final PATCH answers with the Asset JSON, as the TriplyDB client expects. */
  async assetUpload(ctx) {
    const { services, caller, params } = ctx;
    const { dataset } = await services.assets.writable(caller, params.account!, params.dataset!);
    const response = await services.platform.uploads.handle(toWebRequest(ctx.req, ctx.apiUrl), {
      scope: `/datasets/${params.account}/${params.dataset}/assets/add`,
      baseUrl: ctx.apiUrl,
      onFinish: async (upload) => {
        const asset = await services.assets.store(
          dataset,
          { fileName: upload.fileName, size: upload.size, uploadKey: upload.blobKey },
          upload.metadata.versionOf || undefined,
          ctx.apiUrl,
        );
        await services.platform.blobs.uploads.delete(`${upload.blobKey}.json`).catch(() => {});
        return { body: JSON.stringify(assetView(asset, datasetUrl(ctx))), headers: { 'content-type': 'application/json; charset=utf-8' } };
      },
    });
    return fromWebResponse(response);
  },

  /**
   * On AWS a redirect to a short-lived S3 link (S3 answers Range requests itself); embedded, the
   * bytes stream, a single `Range: bytes=` range as 206 with Content-Range (416 outside the file).
   */
  async downloadAsset(ctx) {
    const { asset, version } = await ctx.services.assets.locate(ctx.caller, ctx.params.account!, ctx.params.dataset!, ctx.params.identifier!, ctx.params.versionId ?? null);
    return assetFile(ctx, asset, version);
  },

  /** `GET …/assets/download?fileName=`: the latest version of the asset of that name. */
  async downloadAssetByName(ctx) {
    allowQueryParams(ctx.req, ['fileName']);
    const fileName = singleQueryParam(ctx.req, 'fileName');
    if (!fileName) throw new ValidationError('fileName: give the name of the asset to download (?fileName=...).');
    const { asset } = await ctx.services.assets.byName(ctx.caller, ctx.params.account!, ctx.params.dataset!, fileName);
    return assetFile(ctx, asset, asset.versions[asset.versions.length - 1]!);
  },

  /** Deleting an asset answers 204; deleting one of its versions answers the asset left (200), or 204 when it was the last. */
  async deleteAsset(ctx) {
    const left = await ctx.services.assets.delete(ctx.caller, ctx.params.account!, ctx.params.dataset!, ctx.params.identifier!, ctx.params.versionId ?? null);
    if (ctx.params.versionId !== undefined && left) return jsonResponse(200, assetView(left, datasetUrl(ctx)));
    return { status: 204, headers: {} };
  },

  async deleteAllAssets(ctx) {
    allowQueryParams(ctx.req, []);
    await ctx.services.assets.deleteAll(ctx.caller, ctx.params.account!, ctx.params.dataset!);
    return { status: 204, headers: {} };
  },
}, { listAssets: ['fileName'], downloadAssetByName: ['fileName'] });

async function assetFile(ctx: OperationContext, asset: AssetRecord, version: AssetVersion): Promise<HttpResponse> {
  const { assets, platform } = ctx.services;
  const file = { key: version.blobKey, fileName: asset.assetName, contentType: version.contentType ?? 'application/octet-stream', size: version.fileSize };
  const response = await storedFileResponse(platform.blobs.data, file, () => assets.open(asset, version));
  if (response.status !== 200) return response;
  const range = parseRange(ctx.req.headers.range, file.size);
  const headers = { ...response.headers, 'accept-ranges': 'bytes' };
  if (range === null) return { ...response, headers };
  if (range === 'unsatisfiable') {
    (response.body as Readable).destroy();
    return { status: 416, headers: { 'content-type': 'application/json; charset=utf-8', 'content-range': `bytes */${file.size}` }, body: JSON.stringify({ message: `Range: the asset has ${file.size} bytes; ask for a range within them.` }) };
  }
  return {
    status: 206,
    headers: { ...headers, 'content-length': String(range.end - range.start + 1), 'content-range': `bytes ${range.start}-${range.end}/${file.size}` },
    body: sliceStream(response.body as Readable, range),
  };
}
