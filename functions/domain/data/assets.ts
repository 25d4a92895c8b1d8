/** Assets: files stored with a dataset, with versions (TriplyDB's Asset model). */
export interface AssetVersion {
  id: string;
  uploadedAt: string;
  fileSize: number;
  blobKey: string;
  contentType?: string;
}

export interface AssetRecord {
  identifier: string;
  datasetId: string;
  assetName: string;
  createdAt: string;
  updatedAt: string;
  /** Oldest first; the last one is the latest. */
  versions: AssetVersion[];
}

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
