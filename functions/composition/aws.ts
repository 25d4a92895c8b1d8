import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { joseTokenCodec, randomIds, scryptPasswordHasher, systemClock } from '../adapters/common/node-crypto.js';
import { DynamoDbMetadataStore } from '../adapters/aws/dynamodb-metadata-store.js';
import { requiredEnv, settingsFromEnv } from '../config.js';
import { ENV } from '../env-names.js';
import type { Services } from '../http/api.js';
import { createServices } from './services.js';

export const documentClient = (client: DynamoDBClient): DynamoDBDocumentClient =>
  DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });

let services: Promise<Services> | undefined;

/**
 * The AWS composition root: SDK clients are built once per cold start from the environment
 * (endpoints come from AWS_ENDPOINT_URL_* when set, so the same code runs against stand-ins).
 */
export function awsServices(): Promise<Services> {
  services ??= Promise.resolve().then(() => {
    const db = documentClient(new DynamoDBClient({}));
    return createServices({
      store: new DynamoDbMetadataStore(db, requiredEnv(ENV.tableName)),
      clock: systemClock,
      ids: randomIds,
      passwords: scryptPasswordHasher,
      tokens: joseTokenCodec,
      settings: settingsFromEnv(),
    });
  });
  return services;
}
