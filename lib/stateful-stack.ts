import { Duration, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import { AttributeType, Billing, PointInTimeRecoverySpecification, TableEncryptionV2, TableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { BlockPublicAccess, Bucket, BucketEncryption, CfnBucket, ObjectOwnership, type BucketProps } from 'aws-cdk-lib/aws-s3';
import type { Construct } from 'constructs';
import { TABLE_SCHEMA } from '../functions/adapters/aws/table-schema.js';

/**
 * Key prefix under which Lambda functions spill responses too large to return (see
 * `functions/http/lambda.ts`); they are fetched through a link valid for minutes.
 */
export const SPILLED_RESPONSES_PREFIX = 'responses/';

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

  constructor(scope: Construct, id: string, props?: StackProps) {
    super(scope, id, props);

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

    this.dataBucket = new Bucket(this, 'DataBucket', {
      ...PRIVATE_BUCKET,
      versioned: true, // guards graphs against accidental overwrite or delete
      removalPolicy: RemovalPolicy.RETAIN,
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
      removalPolicy: RemovalPolicy.RETAIN,
      lifecycleRules: [
        { id: 'ExpireUploads', expiration: Duration.days(7) },
        { id: 'AbortIncompleteMultipart', abortIncompleteMultipartUploadAfter: Duration.days(1) },
      ],
    });

    this.artifactsBucket = new Bucket(this, 'ArtifactsBucket', {
      ...PRIVATE_BUCKET,
      removalPolicy: RemovalPolicy.RETAIN,
      // Where rules overlap S3 applies the earliest expiration: spilled responses go after a day,
      // everything else after 30.
      lifecycleRules: [
        { id: 'ExpireArtifacts', expiration: Duration.days(30) },
        { id: 'ExpireSpilledResponses', prefix: SPILLED_RESPONSES_PREFIX, expiration: Duration.days(1) },
        { id: 'AbortIncompleteMultipart', abortIncompleteMultipartUploadAfter: Duration.days(1) },
      ],
    });
  }
}
