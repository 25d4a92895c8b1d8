import { PutEventsCommand, type EventBridgeClient } from '@aws-sdk/client-eventbridge';
import type { AssetStoredEvent, ImportFinishedEvent, ImportStartedEvent, UploadEvents } from '../../ports/upload-events.js';

export const UPLOAD_EVENT_SOURCE = 'linked-data-platform.uploads';
export const UPLOAD_EVENT_TYPES = { importStarted: 'Import started', importFinished: 'Import finished' } as const;
/**
 * Where asset files live in the data bucket (`datasets/<id>/assets/<identifier>/<version>`, see
 * asset-service.ts): the key filter (EventBridge wildcard) of the rule that sends the bucket's
 * `Object Created` events to the hook dispatcher. Here rather than in the handler so the stack
 * can use it without loading the handler's dependencies.
 */
export const ASSET_KEY_WILDCARD = 'datasets/*/assets/*';

/**
 * On AWS: import events go to the default EventBridge bus, where a rule hands them to the hook
 * dispatcher; asset events need nothing here, because the data bucket's S3 notification on
 * `datasets/<id>/assets/` does that.
 */
export class EventBridgeUploadEvents implements UploadEvents {
  constructor(private readonly client: EventBridgeClient) {}

  async assetStored(_event: AssetStoredEvent): Promise<void> {}

  async importStarted(event: ImportStartedEvent): Promise<void> {
    await this.put(UPLOAD_EVENT_TYPES.importStarted, event);
  }

  async importFinished(event: ImportFinishedEvent): Promise<void> {
    await this.put(UPLOAD_EVENT_TYPES.importFinished, event);
  }

  private async put(detailType: string, detail: object): Promise<void> {
    const out = await this.client.send(new PutEventsCommand({ Entries: [{ Source: UPLOAD_EVENT_SOURCE, DetailType: detailType, Detail: JSON.stringify(detail) }] }));
    if (out.FailedEntryCount) throw new Error(`EventBridge refused the ${detailType} event: ${out.Entries?.[0]?.ErrorMessage ?? 'unknown'}`);
  }
}
