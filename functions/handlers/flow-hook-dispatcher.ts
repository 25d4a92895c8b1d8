import middy from '@middy/core';
import type { EventBridgeEvent } from 'aws-lambda';
import { UPLOAD_EVENT_SOURCE, UPLOAD_EVENT_TYPES } from '../adapters/aws/eventbridge-upload-events.js';
import { awsLambda, awsServices } from '../composition/aws.js';
import type { ImportFinishedEvent, ImportStartedEvent } from '../ports/upload-events.js';
import { DatasetWebhooks } from '../domain/datasets/dataset-webhooks.js';

/** Where asset files live in the data bucket (see asset-service.ts): the notification rule's key filter. */
export { ASSET_KEY_WILDCARD } from '../adapters/aws/eventbridge-upload-events.js';
const ASSET_KEY = /^datasets\/([^/]+)\/assets\/([^/]+)\/([^/]+)$/;

/** S3's "Object Created" event as EventBridge delivers it (the fields used here). */
type ObjectCreated = EventBridgeEvent<'Object Created', { bucket: { name: string }; object: { key: string } }>;
type UploadEvent = EventBridgeEvent<string, ImportStartedEvent | ImportFinishedEvent>;

const isObjectCreated = (event: ObjectCreated | UploadEvent): event is ObjectCreated => event?.source === 'aws.s3';

/**
 * Lambda entry of flow hooks on AWS. The data bucket's S3 notifications (an asset file stored,
 * delivered through EventBridge so the stateful stack need not know this function) and the
 * import events (an upload started or ended) arrive here and go to the
 * same hook service the embedded platform calls in-process. A failure throws, so the
 * asynchronous invocation is retried (an asset's record may land just after its file).
 */
const base = async (event: ObjectCreated | UploadEvent): Promise<void> => {
  const services = await awsServices();
  if (isObjectCreated(event)) {
    const match = ASSET_KEY.exec(event.detail?.object?.key ?? '');
    if (!match) return;
    const [, datasetId, identifier, versionId] = match as unknown as [string, string, string, string];
    const asset = await services.platform.store.getAsset(datasetId, identifier);
    if (!asset?.versions.some((v) => v.id === versionId)) throw new Error(`asset ${identifier} version ${versionId} is not recorded yet`);
    await new DatasetWebhooks(services.platform, services.access).assetStored({ datasetId, identifier, versionId });
    await services.hooks.assetStored({ datasetId, identifier, versionId });
    return;
  }
  if (event?.source !== UPLOAD_EVENT_SOURCE) return;
  if (event['detail-type'] === UPLOAD_EVENT_TYPES.importStarted) await services.hooks.importStarted(event.detail as ImportStartedEvent);
  else if (event['detail-type'] === UPLOAD_EVENT_TYPES.importFinished) {
    // Dataset webhooks first: a failed delivery is recorded, never thrown, so a retry does not send twice.
    await new DatasetWebhooks(services.platform, services.access).importFinished(event.detail as ImportFinishedEvent);
    await services.hooks.importFinished(event.detail as ImportFinishedEvent);
  }
};

export const handler = middy(base).use(awsLambda.middlewares);
