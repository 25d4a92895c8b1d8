/**
 * What uploads tell the rest of the platform (flow hooks listen). On AWS the asset event comes
 * from the data bucket's S3 notifications and the import events go through EventBridge; on the
 * embedded platform they are delivered in-process.
 */
export interface AssetStoredEvent {
  datasetId: string;
  identifier: string;
  versionId: string;
  /** The API URL the upload came in on (absolute links in the hook's runs). */
  apiUrl?: string;
}

export interface ImportStartedEvent {
  datasetId: string;
  jobId: string;
  apiUrl?: string;
}

export interface ImportFinishedEvent {
  datasetId: string;
  jobId: string;
  /** Names of the graphs the import added or replaced; empty when it added none or failed. */
  graphs: string[];
  ok: boolean;
}

export interface UploadEvents {
  assetStored(event: AssetStoredEvent): Promise<void>;
  importStarted(event: ImportStartedEvent): Promise<void>;
  importFinished(event: ImportFinishedEvent): Promise<void>;
}
