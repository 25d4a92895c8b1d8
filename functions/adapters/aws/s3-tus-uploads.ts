import type { S3ClientConfig } from '@aws-sdk/client-s3';
import type { KvStore } from '@tus/server';
import { S3Store, type MetadataValue } from '@tus/s3-store';
import { TUS_PREFIX, TusUploadsBase } from '../common/tus-uploads.js';

/** S3 refuses multipart parts under 5 MiB (except the last); the client's chunks are 5 MiB. */
const MIB = 1024 * 1024;
/** ListObjectsV2 pages read by `unfinished()` at most (1000 keys each): uploads expire after 7 days. */
const MAX_LIST_PAGES = 100;

/**
 * No cache: the upload's state is read from S3 on every request, so whichever task of the upload
 * host a request reaches sees what another task wrote (the store's default is a per-process map,
 * which would keep answering for an upload another task finished or removed).
 */
const NO_CACHE: KvStore<MetadataValue> = {
  get: async () => undefined,
  set: async () => {},
  delete: async () => {},
};

/**
 * @tus/s3-store keeps an upload's bytes at `<id>` (a multipart upload, then the object), its state
 * at `<id>.info` and a short tail at `<id>.part`, all at the bucket's root. Here they live where
 * the embedded file store keeps them: under `tus/`, the state at `tus/<id>.json`, so the import
 * worker and the asset code read `tus/<id>` and remove `tus/<id>.json` the same way on both
 * runtimes, and IAM can be scoped to `tus/*`. The store names every key in its call's `Key`
 * (`Delete.Objects[].Key` for DeleteObjects); one middleware on its client prefixes them.
 */
class TusPrefixedS3Store extends S3Store {
  constructor(options: ConstructorParameters<typeof S3Store>[0]) {
    super(options);
    this.client.middlewareStack.add(
      (next) => async (args) => {
        const input = args.input as { Key?: string; Delete?: { Objects?: { Key?: string }[] } };
        const prefixed = { ...input };
        if (typeof input.Key === 'string') prefixed.Key = `${TUS_PREFIX}/${input.Key}`;
        if (input.Delete?.Objects) prefixed.Delete = { ...input.Delete, Objects: input.Delete.Objects.map((o) => ({ ...o, Key: `${TUS_PREFIX}/${o.Key}` })) };
        return next({ ...args, input: prefixed as typeof args.input });
      },
      { step: 'initialize', name: 'tusKeyPrefix' },
    );
  }

  protected override infoKey(id: string): string {
    return `${id}.json`;
  }

  /** Ids of the uploads whose state is in the bucket (`tus/<id>.json`). */
  async *ids(): AsyncIterable<string> {
    let token: string | undefined;
    for (let page = 0; page < MAX_LIST_PAGES; page++) {
      const out = await this.client.listObjectsV2({ Bucket: this.bucket, Prefix: `${TUS_PREFIX}/`, ContinuationToken: token });
      for (const { Key } of out.Contents ?? []) {
        const id = new RegExp(`^${TUS_PREFIX}/([0-9a-f]{32})\\.json$`).exec(Key ?? '')?.[1];
        if (id) yield id;
      }
      if (!out.IsTruncated || !out.NextContinuationToken) return;
      token = out.NextContinuationToken;
    }
  }
}

/**
 * tus on AWS (the upload host): @tus/s3-store over the uploads bucket, each PATCH one or more
 * S3 multipart parts (the last part of a PATCH under 5 MiB waits in `tus/<id>.part` until the next
 * one). All state is in S3 (the multipart upload's parts give the offset), so any task of the
 * upload host resumes any upload. Same rules as the embedded runtime's TusUploads (TusUploadsBase).
 */
export class S3TusUploads extends TusUploadsBase {
  constructor(options: { bucket: string; maxSize: number; s3?: S3ClientConfig; partSize?: number }) {
    super(
      new TusPrefixedS3Store({
        s3ClientConfig: { ...options.s3, bucket: options.bucket },
        partSize: options.partSize ?? 8 * MIB,
        cache: NO_CACHE,
        // The bucket's lifecycle rules expire uploads (7 days) and abort stale multipart uploads (1 day).
        expirationPeriodInMilliseconds: 0,
        useTags: false,
      }),
      { maxSize: options.maxSize },
    );
  }

  protected uploadIds(): AsyncIterable<string> {
    return (this.store as TusPrefixedS3Store).ids();
  }
}
