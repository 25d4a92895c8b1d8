import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { S3BlobStore } from '../adapters/aws/s3-blob-store.js';
import { joseTokenCodec, randomIds, scryptPasswordHasher, systemClock } from '../adapters/common/node-crypto.js';
import { DynamoDbMetadataStore } from '../adapters/aws/dynamodb-metadata-store.js';
import { requiredEnv, settingsFromEnv } from '../config.js';
import type { Blobs } from '../domain/platform.js';
import { ENV, type EnvName } from '../env-names.js';
import type { BlobStore } from '../ports/blob-store.js';
import type { Services } from '../http/api.js';
import { createServices } from './services.js';

export const documentClient = (client: DynamoDBClient): DynamoDBDocumentClient =>
  DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });

/**
 * A function only gets the bucket env vars its family is granted (see FAMILIES in the route
 * table); touching another bucket is a programming error, reported as such.
 */
function bucketStores(s3: () => S3Client): Blobs {
  const store = (env: EnvName): BlobStore => {
    const bucket = process.env[env];
    if (bucket) return new S3BlobStore(s3(), bucket);
    const refuse = () => {
      throw new Error(`${env} is not set: this function is not granted that bucket`);
    };
    return { put: refuse, get: refuse, head: refuse, delete: refuse, list: refuse };
  };
  return { data: store(ENV.dataBucketName), uploads: store(ENV.uploadsBucketName), artifacts: store(ENV.artifactsBucketName) };
}

let services: Promise<Services> | undefined;

/**
 * The AWS composition root: SDK clients are built once per cold start from the environment
 * (endpoints come from AWS_ENDPOINT_URL_* when set, so the same code runs against stand-ins).
 */
export function awsServices(): Promise<Services> {
  services ??= Promise.resolve().then(() => {
    const db = documentClient(new DynamoDBClient({}));
    let s3: S3Client | undefined;
    return createServices({
      store: new DynamoDbMetadataStore(db, requiredEnv(ENV.tableName)),
      blobs: bucketStores(() => (s3 ??= new S3Client({}))),
      clock: systemClock,
      ids: randomIds,
      passwords: scryptPasswordHasher,
      tokens: joseTokenCodec,
      settings: settingsFromEnv(),
    });
  });
  return services;
}
