/**
 * CDK: the stateful stack (the single table, the three buckets, their policies, lifecycle rules
 * and event notifications). Templates only, no bundling (the set-up is in test/support/stacks.ts).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Match } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { TABLE_SCHEMA } from '../../functions/adapters/aws/table-schema.js';
import { ACCESS_LOG_DAYS, NONCURRENT_VERSION_DAYS, SPILLED_RESPONSES_PREFIX } from '../../lib/stateful-stack.js';
import { REPO_ROOT, stateful, sfTemplate, logicalId, synthesizeStacks } from '../support/stacks.js';

synthesizeStacks({ bundle: false });

describe('stateful stack', () => {
  it('builds the table from TABLE_SCHEMA', () => {
    const indexes = TABLE_SCHEMA.globalSecondaryIndexes;
    sfTemplate.resourceCountIs('AWS::DynamoDB::GlobalTable', 1);
    sfTemplate.hasResource('AWS::DynamoDB::GlobalTable', {
      DeletionPolicy: 'Retain',
      UpdateReplacePolicy: 'Retain',
      Properties: {
        BillingMode: 'PAY_PER_REQUEST',
        KeySchema: [
          { AttributeName: TABLE_SCHEMA.partitionKey, KeyType: 'HASH' },
          { AttributeName: TABLE_SCHEMA.sortKey, KeyType: 'RANGE' },
        ],
        AttributeDefinitions: Match.arrayWith(
          [TABLE_SCHEMA.partitionKey, TABLE_SCHEMA.sortKey, ...indexes.flatMap((i) => [i.partitionKey, i.sortKey])].map(
            (name) => ({ AttributeName: name, AttributeType: 'S' }),
          ),
        ),
        GlobalSecondaryIndexes: indexes.map((i) => ({
          IndexName: i.indexName,
          KeySchema: [
            { AttributeName: i.partitionKey, KeyType: 'HASH' },
            { AttributeName: i.sortKey, KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'ALL' },
        })),
        TimeToLiveSpecification: { AttributeName: TABLE_SCHEMA.ttlAttribute, Enabled: true },
        SSESpecification: { SSEEnabled: true },
        Replicas: [
          Match.objectLike({
            DeletionProtectionEnabled: true,
            PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
          }),
        ],
      },
    });
  });

  it('has three private, encrypted, TLS-only buckets, and a fourth like them for their access logs', () => {
    sfTemplate.resourceCountIs('AWS::S3::Bucket', 4);
    for (const bucket of [stateful.dataBucket, stateful.uploadsBucket, stateful.artifactsBucket, stateful.accessLogsBucket]) {
      const id = logicalId(bucket);
      const resource = sfTemplate.toJSON().Resources[id];
      expect(resource.Properties).toMatchObject({
        PublicAccessBlockConfiguration: {
          BlockPublicAcls: true,
          BlockPublicPolicy: true,
          IgnorePublicAcls: true,
          RestrictPublicBuckets: true,
        },
        BucketEncryption: { ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }] },
        OwnershipControls: { Rules: [{ ObjectOwnership: 'BucketOwnerEnforced' }] },
      });
      sfTemplate.hasResourceProperties('AWS::S3::BucketPolicy', {
        Bucket: { Ref: id },
        PolicyDocument: {
          Statement: Match.arrayWith([
            Match.objectLike({ Effect: 'Deny', Action: 's3:*', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
          ]),
        },
      });
    }
  });

  it('versions and retains the data bucket; expires uploads and artifacts', () => {
    const resources = sfTemplate.toJSON().Resources;
    const data = resources[logicalId(stateful.dataBucket)];
    expect(data.DeletionPolicy).toBe('Retain');
    expect(data.Properties.VersioningConfiguration).toEqual({ Status: 'Enabled' });

    const uploadRules = resources[logicalId(stateful.uploadsBucket)].Properties.LifecycleConfiguration.Rules;
    expect(uploadRules).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ ExpirationInDays: 7, Status: 'Enabled' }),
        expect.objectContaining({ AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 }, Status: 'Enabled' }),
      ]),
    );
    const artifactRules: Record<string, any>[] = resources[logicalId(stateful.artifactsBucket)].Properties.LifecycleConfiguration.Rules;
    // Artifacts in general: 30 days, for every key (no prefix or filter).
    const general = artifactRules.filter((r) => r.ExpirationInDays === 30);
    expect(general).toHaveLength(1);
    expect(general[0]).toMatchObject({ Status: 'Enabled' });
    expect(general[0]).not.toHaveProperty('Prefix');
    expect(general[0]).not.toHaveProperty('Filter');
    // Spilled responses (links valid for minutes): 1 day; S3 applies the earliest of overlapping expirations.
    expect(artifactRules).toEqual(
      expect.arrayContaining([expect.objectContaining({ Prefix: SPILLED_RESPONSES_PREFIX, ExpirationInDays: 1, Status: 'Enabled' })]),
    );
    expect(artifactRules).toEqual(
      expect.arrayContaining([expect.objectContaining({ AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 }, Status: 'Enabled' })]),
    );
  });

  it('expires the data bucket\'s old versions and incomplete multipart uploads (versions are kept for restores, not forever)', () => {
    const rules: Record<string, any>[] = sfTemplate.toJSON().Resources[logicalId(stateful.dataBucket)].Properties.LifecycleConfiguration.Rules;
    expect(rules).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ NoncurrentVersionExpiration: { NoncurrentDays: NONCURRENT_VERSION_DAYS }, ExpiredObjectDeleteMarker: true, Status: 'Enabled' }),
        expect.objectContaining({ AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 }, Status: 'Enabled' }),
      ]),
    );
    // Current versions (live graphs and assets) never expire.
    for (const rule of rules) expect(rule).not.toHaveProperty('ExpirationInDays');
  });

  it('logs every bucket\'s server access to the access log bucket (each under its own prefix), delivered under a bucket policy', () => {
    const resources = sfTemplate.toJSON().Resources;
    const logsId = logicalId(stateful.accessLogsBucket);
    const prefixes = new Set<string>();
    for (const bucket of [stateful.dataBucket, stateful.uploadsBucket, stateful.artifactsBucket]) {
      const logging = resources[logicalId(bucket)].Properties.LoggingConfiguration;
      expect(logging.DestinationBucketName).toEqual({ Ref: logsId });
      prefixes.add(logging.LogFilePrefix);
    }
    expect(prefixes.size).toBe(3);
    expect(resources[logsId].Properties.LoggingConfiguration).toBeUndefined();
    expect(resources[logsId].Properties.AccessControl).toBeUndefined();
    expect(resources[logsId].Properties.LifecycleConfiguration.Rules).toEqual([expect.objectContaining({ ExpirationInDays: ACCESS_LOG_DAYS, Status: 'Enabled' })]);
    sfTemplate.hasResourceProperties('AWS::S3::BucketPolicy', {
      Bucket: { Ref: logsId },
      PolicyDocument: {
        Statement: Match.arrayWith([Match.objectLike({ Effect: 'Allow', Action: 's3:PutObject', Principal: { Service: 'logging.s3.amazonaws.com' } })]),
      },
    });
  });

  it('outputs the table name (TABLE_NAME of the first administrator step) and the bucket names', () => {
    const outputs = sfTemplate.toJSON().Outputs;
    expect(outputs.TableName.Value).toEqual({ Ref: logicalId(stateful.table) });
    expect(outputs.DataBucketName.Value).toEqual({ Ref: logicalId(stateful.dataBucket) });
    expect(outputs.AccessLogsBucketName.Value).toEqual({ Ref: logicalId(stateful.accessLogsBucket) });
  });

  it('expires the key prefix the Lambda adapter spills large responses under', () => {
    // functions/http/lambda.ts builds the key inline; keep the bucket rule from drifting from it.
    expect(readFileSync(join(REPO_ROOT, 'functions', 'http', 'lambda.ts'), 'utf8')).toContain(`\`${SPILLED_RESPONSES_PREFIX}\${`);
  });

  it('sends the data bucket\'s notifications to EventBridge (natively: no notifications custom resource), and no other bucket\'s', () => {
    const resources = sfTemplate.toJSON().Resources;
    expect(resources[logicalId(stateful.dataBucket)].Properties.NotificationConfiguration).toEqual({ EventBridgeConfiguration: { EventBridgeEnabled: true } });
    for (const bucket of [stateful.uploadsBucket, stateful.artifactsBucket]) {
      expect(resources[logicalId(bucket)].Properties.NotificationConfiguration).toBeUndefined();
    }
  });

  it('needs no custom resources (nothing to run at deploy time)', () => {
    expect(Object.values(sfTemplate.toJSON().Resources).filter((r: any) => r.Type.startsWith('Custom::'))).toEqual([]);
    sfTemplate.resourceCountIs('AWS::Lambda::Function', 0);
  });
});
