/** ResumableUploads port: tus 1.0.0 uploads (@tus/server locally, S3 multipart behind it on AWS). */
export interface FinishedUpload {
  uploadId: string;
  fileName: string;
  size: number;
  /** Where the bytes are: a key in the uploads bucket. */
  blobKey: string;
  /** The client's Upload-Metadata (e.g. `versionOf` for assets). */
  metadata: Record<string, string>;
}

/**
 * Resumable uploads (tus 1.0.0). `scope` is the URL path the uploads of one job or one dataset's
 * assets live under; an upload created under one scope is not reachable from another.
 */
export interface ResumableUploads {
  handle(
    request: Request,
    context: {
      scope: string;
      /** Absolute base URL for Location headers. */
      baseUrl: string;
      /** A body (e.g. the asset's JSON) turns the final PATCH's 204 into a 200 with that body. */
      onFinish(upload: FinishedUpload): Promise<{ body?: string; headers?: Record<string, string> } | void>;
    },
  ): Promise<Response>;
  /** Uploads created under a scope ending in `scopeSuffix` that have not received all their bytes yet. */
  unfinished?(scopeSuffix: string): Promise<UnfinishedUpload[]>;
}

export interface UnfinishedUpload {
  fileName: string;
  /** Bytes received so far. */
  offset: number;
  /** Declared length; undefined when the client deferred it. */
  size?: number;
}
