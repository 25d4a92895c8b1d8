/**
 * dynalite (DynamoDB's wire protocol, in memory) on 127.0.0.1 and a free port, with a client for
 * it: what the store contract suites run their DynamoDB adapters against.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import dynalite from 'dynalite';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface LocalDynamo {
  server: Server;
  url: string;
  client: DynamoDBClient;
  stop(): Promise<void>;
}

export async function startDynalite(): Promise<LocalDynamo> {
  const server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 }) as Server;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const client = new DynamoDBClient({ endpoint: url, region: 'local', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  return {
    server,
    url,
    client,
    async stop() {
      client.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}
