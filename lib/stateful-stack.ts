import { CfnOutput, Duration, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import { AttributeType, Billing, PointInTimeRecoverySpecification, TableEncryptionV2, TableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { BlockPublicAccess, Bucket, BucketEncryption, CfnBucket, ObjectOwnership, type BucketProps } from 'aws-cdk-lib/aws-s3';
import type { Construct } from 'constructs';
import { TABLE_SCHEMA } from '../functions/adapters/aws/table-schema.js';
import { acknowledge } from './nag.js';

/**
 * Key prefix under which Lambda functions spill responses too large to return (see
 * `functions/http/lambda.ts`); they are fetched through a link valid for minutes.
 */
export const SPILLED_RESPONSES_PREFIX = 'responses/';

/** How long the data bucket keeps a graph's or asset's old versions (overwritten or deleted). */
export const NONCURRENT_VERSION_DAYS = 30;
/** How long S3 server access logs are kept. */
export const ACCESS_LOG_DAYS = 90;

/** Settings every bucket of the platform shares: private, encrypted, TLS only, no ACLs. */
const PRIVATE_BUCKET: BucketProps = {
  blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
  encryption: BucketEncryption.S3_MANAGED,
  enforceSSL: true,
  objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
};

/**
 * Everything that holds data: the single table and the buckets. Kept apart from the stateless
 * stack so functions and the API can be replaced freely without touching stored data.
 */
export class StatefulStack extends Stack {
  readonly table: TableV2;
  /**
   * Graphs and assets of datasets. Sends its notifications to EventBridge, where the stateless
   * stack's rule picks asset files for the flow hook dispatcher.
   */
  readonly dataBucket: Bucket;
  /** Temporary resumable (tus) and multipart uploads. */
  readonly uploadsBucket: Bucket;
  /** Flow artifacts and large exports served through presigned URLs. */
  readonly artifactsBucket: Bucket;
  /** S3 server access logs of the three buckets above (each under its own prefix). */
  readonly accessLogsBucket: Bucket;

  constructor(scope: Construct, id: string, props?: StackProps) {
    super(scope, id, props);
    // Server access logs are delivered under the log bucket's policy, not the legacy
    // LogDeliveryWrite ACL (which ACL-less buckets, BUCKET_OWNER_ENFORCED, cannot take).
    this.node.setContext('@aws-cdk/aws-s3:serverAccessLogsUseBucketPolicy', true);

    const str = (name: string) => ({ name, type: AttributeType.STRING });
    this.table = new TableV2(this, 'Table', {
      partitionKey: str(TABLE_SCHEMA.partitionKey),
      sortKey: str(TABLE_SCHEMA.sortKey),
      // Derived from the shared schema so the local bootstrap and AWS cannot drift.
      globalSecondaryIndexes: TABLE_SCHEMA.globalSecondaryIndexes.map((gsi) => ({
        indexName: gsi.indexName,
        partitionKey: str(gsi.partitionKey),
        sortKey: str(gsi.sortKey),
        // ProjectionType defaults to ALL in TableV2.
      })),
      timeToLiveAttribute: TABLE_SCHEMA.ttlAttribute,
      billing: Billing.onDemand(),
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true } satisfies PointInTimeRecoverySpecification,
      encryption: TableEncryptionV2.awsManagedKey(),
      deletionProtection: true,
      removalPolicy: RemovalPolicy.RETAIN,
    });

    // Server access logs of every bucket (who read or changed which object), kept ACCESS_LOG_DAYS.
    this.accessLogsBucket = new Bucket(this, 'AccessLogsBucket', {
      ...PRIVATE_BUCKET,
      removalPolicy: RemovalPolicy.RETAIN,
      lifecycleRules: [{ id: 'ExpireAccessLogs', expiration: Duration.days(ACCESS_LOG_DAYS) }],
    });
    acknowledge(this.accessLogsBucket, 'S1', 'This is the access log bucket: logging its own access would log the log deliveries (a loop S3 advises against).');
    const logsOf = (name: string): Pick<BucketProps, 'serverAccessLogsBucket' | 'serverAccessLogsPrefix'> => ({
      serverAccessLogsBucket: this.accessLogsBucket,
      serverAccessLogsPrefix: `${name}/`,
    });

    this.dataBucket = new Bucket(this, 'DataBucket', {
      ...PRIVATE_BUCKET,
      ...logsOf('data'),
      versioned: true, // guards graphs against accidental overwrite or delete
      removalPolicy: RemovalPolicy.RETAIN,
      // Old versions (a replaced or deleted graph or asset) can be restored for NONCURRENT_VERSION_DAYS, then go.
      lifecycleRules: [
        { id: 'ExpireNoncurrentVersions', noncurrentVersionExpiration: Duration.days(NONCURRENT_VERSION_DAYS), expiredObjectDeleteMarker: true },
        { id: 'AbortIncompleteMultipart', abortIncompleteMultipartUploadAfter: Duration.days(1) },
      ],
    });
    // S3 -> EventBridge (what `eventBridgeEnabled: true` asks for), set on the CloudFormation bucket
    // itself: the L2 prop goes through a notifications custom resource (a Lambda function run at
    // deploy time). Through EventBridge, the bucket needs to know nothing of the stateless stack's
    // functions (a direct notification would be a cross-stack cycle).
    (this.dataBucket.node.defaultChild as CfnBucket).notificationConfiguration = {
      eventBridgeConfiguration: { eventBridgeEnabled: true },
    };

    // Uploads are scratch space that the lifecycle rules empty. RETAIN like every stateful
    // resource: autoDeleteObjects would add a custom-resource Lambda just to empty it.
    this.uploadsBucket = new Bucket(this, 'UploadsBucket', {
      ...PRIVATE_BUCKET,
      ...logsOf('uploads'),
      removalPolicy: RemovalPolicy.RETAIN,
      lifecycleRules: [
        { id: 'ExpireUploads', expiration: Duration.days(7) },
        { id: 'AbortIncompleteMultipart', abortIncompleteMultipartUploadAfter: Duration.days(1) },
      ],
    });

    this.artifactsBucket = new Bucket(this, 'ArtifactsBucket', {
      ...PRIVATE_BUCKET,
      ...logsOf('artifacts'),
      removalPolicy: RemovalPolicy.RETAIN,
      // Where rules overlap S3 applies the earliest expiration: spilled responses go after a day,
      // everything else after 30.
      lifecycleRules: [
        { id: 'ExpireArtifacts', expiration: Duration.days(30) },
        { id: 'ExpireSpilledResponses', prefix: SPILLED_RESPONSES_PREFIX, expiration: Duration.days(1) },
        { id: 'AbortIncompleteMultipart', abortIncompleteMultipartUploadAfter: Duration.days(1) },
      ],
    });

    // What the operator needs after deploying: the table for the first administrator (bin/cli.ts).
    new CfnOutput(this, 'TableName', { value: this.table.tableName, description: 'TABLE_NAME for bin/cli.ts create-admin' });
    new CfnOutput(this, 'DataBucketName', { value: this.dataBucket.bucketName, description: 'Graphs and assets (versioned)' });
    new CfnOutput(this, 'AccessLogsBucketName', { value: this.accessLogsBucket.bucketName, description: 'S3 server access logs of the buckets' });
  }
}
