import { createHash } from 'node:crypto';
import { RemovalPolicy, Stack } from 'aws-cdk-lib';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { CfnResourcePolicy, LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { CfnDomain } from 'aws-cdk-lib/aws-opensearchservice';
import { Construct } from 'constructs';
import { ENV } from '../../functions/env-names.js';
import { acknowledge, acknowledgeWildcardResource } from '../nag.js';
import type { GrantTarget } from './app-function.js';

/** What a function does with the search indexes (FamilySpec['grants'].searchIndexes). */
export type SearchIndexesUse = 'read' | 'write';

export interface SearchDomainProps {
  /** Data node instance type. Default `r6g.large.search`. */
  instanceType?: string;
  /** Data nodes; two or more spread over two availability zones. Default 2. */
  dataNodes?: number;
  /** EBS (gp3) per data node, GiB. Default 20. */
  volumeGb?: number;
  /** Dedicated master nodes (0, 3 or 5). Default 0: small clusters let the data nodes elect. */
  dedicatedMasters?: 0 | 3 | 5;
  /** OpenSearch engine version. Default OpenSearch_2.19. */
  engineVersion?: string;
}

const READ_ACTIONS = ['es:ESHttpGet', 'es:ESHttpHead', 'es:ESHttpPost'];
const WRITE_ACTIONS = [...READ_ACTIONS, 'es:ESHttpPut', 'es:ESHttpDelete'];

/**
 * Amazon OpenSearch Service for text search services (issue 15), made only when the stack is
 * configured for search (`cdk deploy -c search=opensearch`); without it, text search runs on the
 * embedded engine with its indexes as data bucket blobs. L1 resources only (no custom resources):
 * the domain, its three log groups and the CloudWatch Logs resource policy that lets the service
 * write them.
 *
 * Access: HTTPS only (TLS 1.2), every request SigV4-signed; the domain's access policy admits the
 * account's IAM principals and the functions' roles get exactly the es:ESHttp* actions their
 * FamilySpec `searchIndexes` use needs, on this domain's indexes. Encrypted at rest and between
 * nodes; search and index slow logs and application logs go to CloudWatch.
 */
export class SearchDomain extends Construct {
  readonly domain: CfnDomain;
  /** `https://<domain endpoint>`: OPENSEARCH_URL of the granted functions. */
  readonly url: string;
  readonly domainArn: string;

  constructor(scope: Construct, id: string, props: SearchDomainProps = {}) {
    super(scope, id);
    const stack = Stack.of(this);
    const dataNodes = props.dataNodes ?? 2;
    if (!Number.isInteger(dataNodes) || dataNodes < 1) throw new Error(`search dataNodes must be a whole number of 1 or more, got ${dataNodes}`);
    const masters = props.dedicatedMasters ?? 0;
    // 3 to 28 lower-case letters, digits and hyphens, unique per stack (a hash of its path).
    const domainName = `ldp-search-${createHash('sha256').update(`${stack.stackName}/${this.node.path}`).digest('hex').slice(0, 12)}`;
    const domainArn = stack.formatArn({ service: 'es', resource: 'domain', resourceName: domainName });
    this.domainArn = domainArn;

    const logs = {
      SEARCH_SLOW_LOGS: new LogGroup(this, 'SearchSlowLogs', { retention: RetentionDays.THREE_MONTHS, removalPolicy: RemovalPolicy.DESTROY }),
      INDEX_SLOW_LOGS: new LogGroup(this, 'IndexSlowLogs', { retention: RetentionDays.THREE_MONTHS, removalPolicy: RemovalPolicy.DESTROY }),
      ES_APPLICATION_LOGS: new LogGroup(this, 'ApplicationLogs', { retention: RetentionDays.THREE_MONTHS, removalPolicy: RemovalPolicy.DESTROY }),
    };
    const logPolicy = new CfnResourcePolicy(this, 'LogsPolicy', {
      policyName: `${domainName}-logs`,
      policyDocument: stack.toJsonString({
        Version: '2012-10-17',
        Statement: [
          {
            Effect: 'Allow',
            Principal: { Service: 'es.amazonaws.com' },
            Action: ['logs:PutLogEvents', 'logs:CreateLogStream'],
            Resource: Object.values(logs).map((g) => g.logGroupArn),
            Condition: { StringEquals: { 'aws:SourceAccount': stack.account } },
          },
        ],
      }),
    });

    this.domain = new CfnDomain(this, 'Domain', {
      domainName,
      engineVersion: props.engineVersion ?? 'OpenSearch_2.19',
      clusterConfig: {
        instanceType: props.instanceType ?? 'r6g.large.search',
        instanceCount: dataNodes,
        zoneAwarenessEnabled: dataNodes >= 2,
        ...(dataNodes >= 2 ? { zoneAwarenessConfig: { availabilityZoneCount: 2 } } : {}),
        dedicatedMasterEnabled: masters > 0,
        ...(masters > 0 ? { dedicatedMasterCount: masters, dedicatedMasterType: props.instanceType ?? 'r6g.large.search' } : {}),
      },
      ebsOptions: { ebsEnabled: true, volumeType: 'gp3', volumeSize: props.volumeGb ?? 20 },
      encryptionAtRestOptions: { enabled: true },
      nodeToNodeEncryptionOptions: { enabled: true },
      domainEndpointOptions: { enforceHttps: true, tlsSecurityPolicy: 'Policy-Min-TLS-1-2-2019-07' },
      logPublishingOptions: Object.fromEntries(Object.entries(logs).map(([kind, group]) => [kind, { enabled: true, cloudWatchLogsLogGroupArn: group.logGroupArn }])),
      accessPolicies: {
        Version: '2012-10-17',
        Statement: [{ Effect: 'Allow', Principal: { AWS: `arn:${stack.partition}:iam::${stack.account}:root` }, Action: 'es:ESHttp*', Resource: `${domainArn}/*` }],
      },
    });
    this.domain.node.addDependency(logPolicy);
    // The indexes are rebuilt from the services' snapshots (start or sync): nothing here is the only copy.
    this.domain.applyRemovalPolicy(RemovalPolicy.DESTROY);
    this.url = `https://${this.domain.attrDomainEndpoint}`;

    const signed = 'Every request is SigV4-signed and allowed only by the IAM policies of the functions that search (es:ESHttp* on this domain); HTTPS with TLS 1.2 only.';
    acknowledge(
      this.domain,
      'OS1',
      `Not in a VPC: the search, services and worker functions reach it over HTTPS from outside the VPC (a VPC domain would put them all in the VPC, which has no NAT). ${signed}`,
    );
    acknowledge(this.domain, 'OS3', `No IP allowlist: Lambda functions have no fixed addresses. ${signed}`);
    if (masters === 0) {
      acknowledge(this.domain, 'OS4', 'No dedicated master nodes by default: a small domain of a few data nodes elects among them; set dedicatedMasters (3 or 5) for a large cluster.');
    }
    if (dataNodes < 2) acknowledge(this.domain, 'OS7', 'One data node by configuration (dataNodes: 1): no second zone; the indexes are rebuilt from the services\' snapshots.');
  }

  /** Gives `fn` the actions of `use` on this domain's indexes and tells it where the domain is. */
  grant(fn: GrantTarget, use: SearchIndexesUse): void {
    const resource = `${this.domainArn}/*`;
    if (!fn.role) throw new Error(`${fn.node.path} has no role`);
    fn.role.addToPrincipalPolicy(new PolicyStatement({ actions: use === 'write' ? WRITE_ACTIONS : READ_ACTIONS, resources: [resource] }));
    acknowledgeWildcardResource(
      fn.role,
      resource,
      'Indexes are created at run time, one per text search service snapshot; the grant is held to this one domain.',
    );
    fn.addEnvironment(ENV.opensearchUrl, this.url);
    fn.addEnvironment(ENV.opensearchSigning, 'es');
  }
}
