/** Assets: files stored with a dataset, with versions (TriplyDB's Asset model). */
import type { AssetRecord } from '../../ports/records/data.js';

// The stored records are types of the ports (ports/records); re-exported for the domain's importers.
export type { AssetRecord, AssetVersion } from '../../ports/records/data.js';

export const MAX_ASSET_NAME_LENGTH = 255;
export const MAX_ASSET_VERSIONS = 1000;

export function assetView(asset: AssetRecord, datasetUrl: string): Record<string, unknown> {
  const url = `${datasetUrl}/assets/${asset.identifier}`;
  const latest = asset.versions[asset.versions.length - 1];
  return {
    assetName: asset.assetName,
    identifier: asset.identifier,
    createdAt: asset.createdAt,
    updatedAt: asset.updatedAt,
    url,
    fileSize: latest?.fileSize,
    versions: asset.versions.map((v) => ({ id: v.id, uploadedAt: v.uploadedAt, url: `${url}/${v.id}`, fileSize: v.fileSize })),
  };
}
