import { HttpMethod, VpcLink, type HttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpServiceDiscoveryIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import { Port, SecurityGroup, SubnetType } from 'aws-cdk-lib/aws-ec2';
import { FargateService } from 'aws-cdk-lib/aws-ecs';
import { DnsRecordType, type Service } from 'aws-cdk-lib/aws-servicediscovery';
import { Construct } from 'constructs';
import { CONTAINERS } from '../../functions/containers/container-table.js';
import { ENV } from '../../functions/env-names.js';
import type { RouteSpec } from '../../functions/http/route-table.js';
import type { ContainerPlatform, NodeTaskDefinition } from './container-platform.js';

export interface UploadHostProps {
  platform: ContainerPlatform;
  api: HttpApi;
  /** The routes the upload host serves (the route table's `host: 'uploads'` routes). */
  routes: readonly RouteSpec[];
}

/** Cloud Map name of the upload host (`uploads.ldp.internal`). */
export const UPLOAD_HOST_SERVICE_NAME = 'uploads';

/**
 * The upload host (issue 19): tus needs requests larger than a Lambda event (the client's 5 MiB
 * chunks), so the API routes the tus routes over a VPC link to a Fargate service running the
 * platform's HTTP API with tus on S3 (functions/containers/upload-host.ts):
 *
 *   client ─► HTTP API ─(tus routes)─► VPC link ─► Cloud Map `uploads` (SRV) ─► upload host tasks
 *
 * - Fargate service of CONTAINERS.uploadHost (desired count from the table), in the public
 *   subnets with a public IP (to pull the public images; there is no NAT), deployments keep 100%
 *   healthy and roll back on the circuit breaker. Its task definition alone has UPLOAD_HOST=true.
 * - Security groups: the host's port only from the VPC link's security group; nothing else in.
 * - Upload state is in S3 (multipart uploads, `tus/<id>.json`), so no sticky routing is needed:
 *   any task resumes any upload.
 */
export class UploadHost extends Construct {
  readonly task: NodeTaskDefinition;
  readonly service: FargateService;
  readonly cloudMapService: Service;
  readonly securityGroup: SecurityGroup;
  readonly vpcLinkSecurityGroup: SecurityGroup;
  readonly vpcLink: VpcLink;
  readonly integration: HttpServiceDiscoveryIntegration;

  constructor(scope: Construct, id: string, props: UploadHostProps) {
    super(scope, id);
    const { platform, api, routes } = props;
    const spec = CONTAINERS.uploadHost;
    const vpc = platform.vpc;
    if (routes.length === 0) throw new Error('UploadHost: no routes to serve (mark them host: \'uploads\' in the route table)');

    this.task = platform.nodeTaskDefinition(this, 'Task', 'uploadHost', { environment: { [ENV.uploadHost]: 'true' } });

    this.vpcLinkSecurityGroup = new SecurityGroup(this, 'VpcLinkSecurityGroup', {
      vpc,
      description: 'API Gateway VPC link to the upload host: out to the host port only',
      allowAllOutbound: false,
    });
    this.securityGroup = new SecurityGroup(this, 'SecurityGroup', {
      vpc,
      description: 'Upload host tasks: in from the API VPC link only; out to AWS APIs (S3, DynamoDB) and the public image registry',
      allowAllOutbound: true,
    });
    this.securityGroup.addIngressRule(this.vpcLinkSecurityGroup, Port.tcp(spec.port), 'The API (VPC link) to the upload host');
    this.vpcLinkSecurityGroup.addEgressRule(this.securityGroup, Port.tcp(spec.port), 'To the upload host');

    this.service = new FargateService(this, 'Service', {
      cluster: platform.cluster,
      taskDefinition: this.task.taskDefinition,
      desiredCount: spec.desiredCount,
      minHealthyPercent: 100,
      maxHealthyPercent: 200,
      circuitBreaker: { enable: true, rollback: true },
      assignPublicIp: true,
      vpcSubnets: { subnetType: SubnetType.PUBLIC },
      securityGroups: [this.securityGroup],
      cloudMapOptions: {
        cloudMapNamespace: platform.namespace,
        name: UPLOAD_HOST_SERVICE_NAME,
        // API Gateway's Cloud Map integration needs SRV records (address and port).
        dnsRecordType: DnsRecordType.SRV,
        container: this.task.app,
        containerPort: spec.port,
      },
    });
    this.cloudMapService = this.service.cloudMapService as Service;

    this.vpcLink = new VpcLink(this, 'VpcLink', {
      vpc,
      subnets: { subnetType: SubnetType.PUBLIC },
      securityGroups: [this.vpcLinkSecurityGroup],
    });
    this.integration = new HttpServiceDiscoveryIntegration('UploadHostIntegration', this.cloudMapService, { vpcLink: this.vpcLink });
    for (const route of routes) {
      if (route.host !== 'uploads') throw new Error(`UploadHost: ${route.method} ${route.path} is not an upload host route`);
      api.addRoutes({ path: route.path, methods: [HttpMethod[route.method]], integration: this.integration });
    }
  }
}
