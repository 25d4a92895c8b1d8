/**
 * CDK: the upload host (lib/constructs/upload-host.ts). The API sends exactly the route table's
 * tus routes (`host: 'uploads'`) over a VPC link to a Cloud Map service of a Fargate service, and
 * no Lambda route exists for them; the host's port is reachable from the VPC link only; the task
 * definition is the only one with UPLOAD_HOST; its task role holds the container table's grants.
 */
import { describe, expect, it } from 'vitest';
import { CONTAINERS } from '../../functions/containers/container-table.js';
import { ENV } from '../../functions/env-names.js';
import { ROUTES, routeKey } from '../../functions/http/route-table.js';
import { APP_CONTAINER } from '../../lib/constructs/container-platform.js';
import { asArray, logicalId, ofType, render, slResources, stateful, stateless, synthesizeStacks, type Statement } from '../support/stacks.js';

synthesizeStacks({ bundle: false });

const spec = CONTAINERS.uploadHost;
const host = () => stateless.uploadHost;
const TUS_ROUTES = ROUTES.filter((r) => r.host === 'uploads');

/** `integrations/<id>` of a route's Target, as the logical id of the integration. */
const targetOf = (route: { Properties: Record<string, any> }): string => {
  const joined = route.Properties.Target['Fn::Join'][1] as unknown[];
  return (joined.find((p) => typeof p === 'object') as { Ref: string }).Ref;
};

describe('upload host: routes', () => {
  it('marks exactly the tus routes (POST …/add, HEAD/PATCH/DELETE …/add/{uploadId} of jobs and assets)', () => {
    expect(TUS_ROUTES.map(routeKey).sort()).toEqual(
      ['POST', 'HEAD', 'PATCH', 'DELETE']
        .flatMap((m) => ['/datasets/{account}/{dataset}/jobs/{jobId}/add', '/datasets/{account}/{dataset}/assets/add'].map((p) => (m === 'POST' ? `${m} ${p}` : `${m} ${p}/{uploadId}`)))
        .sort(),
    );
  });

  it('routes them, and only them, over the VPC link to the upload host\'s Cloud Map service; every other route to a function', () => {
    const integrations = Object.fromEntries(ofType('AWS::ApiGatewayV2::Integration'));
    const viaLink = Object.entries(integrations).filter(([, i]) => i.Properties.ConnectionType === 'VPC_LINK');
    expect(viaLink).toHaveLength(1);
    const integration = viaLink[0];
    const [integrationId, { Properties: p }] = integration!;
    expect(p.IntegrationType).toBe('HTTP_PROXY');
    expect(p.ConnectionId).toEqual({ Ref: logicalId(host().vpcLink) });
    expect(p.IntegrationUri).toEqual({ 'Fn::GetAtt': [logicalId(host().cloudMapService), 'Arn'] });
    expect(p.PayloadFormatVersion).toBe('1.0');

    const routes = ofType('AWS::ApiGatewayV2::Route').map(([, r]) => r);
    const byKey = new Map<string, typeof routes>();
    for (const r of routes) byKey.set(r.Properties.RouteKey, [...(byKey.get(r.Properties.RouteKey) ?? []), r]);
    for (const r of ROUTES) {
      const found = byKey.get(routeKey(r)) ?? [];
      expect(found, routeKey(r)).toHaveLength(1);
      const target = targetOf(found[0]!);
      if (r.host === 'uploads') expect(target, routeKey(r)).toBe(integrationId);
      else expect(integrations[target]!.Properties.IntegrationType, routeKey(r)).toBe('AWS_PROXY');
    }
  });
});

describe('upload host: service and network', () => {
  it('runs the table\'s desired count of tasks as a Fargate service: 100% healthy during deployments, rolled back by the circuit breaker', () => {
    const service = slResources[logicalId(host().service)]!.Properties;
    expect(spec.desiredCount).toBeGreaterThanOrEqual(1);
    expect(service.DesiredCount).toBe(spec.desiredCount);
    expect(service.LaunchType).toBe('FARGATE');
    expect(service.TaskDefinition).toEqual({ Ref: logicalId(host().task.taskDefinition) });
    expect(service.DeploymentConfiguration).toMatchObject({ MinimumHealthyPercent: 100, MaximumPercent: 200, DeploymentCircuitBreaker: { Enable: true, Rollback: true } });
    const vpc = service.NetworkConfiguration.AwsvpcConfiguration;
    expect(vpc.AssignPublicIp).toBe('ENABLED');
    expect(vpc.SecurityGroups).toEqual([{ 'Fn::GetAtt': [logicalId(host().securityGroup), 'GroupId'] }]);
    // Registered in Cloud Map with SRV records (address and port), which API Gateway needs.
    expect(service.ServiceRegistries).toEqual([{ RegistryArn: { 'Fn::GetAtt': [logicalId(host().cloudMapService), 'Arn'] }, ContainerName: APP_CONTAINER, ContainerPort: spec.port }]);
    const discovery = slResources[logicalId(host().cloudMapService)]!.Properties;
    expect(discovery.Name).toBe('uploads');
    expect(discovery.DnsConfig.DnsRecords).toEqual([{ Type: 'SRV', TTL: expect.any(Number) }]);
  });

  it('admits the host\'s port only from the VPC link\'s security group, which reaches only that port', () => {
    const hostSg = logicalId(host().securityGroup);
    const linkSg = logicalId(host().vpcLinkSecurityGroup);
    const hostGroup = slResources[hostSg]!.Properties;
    expect(hostGroup.SecurityGroupIngress ?? []).toEqual([]);
    const ingress = ofType('AWS::EC2::SecurityGroupIngress').map(([, r]) => r.Properties).filter((r) => JSON.stringify(r.GroupId).includes(hostSg));
    expect(ingress).toEqual([expect.objectContaining({ IpProtocol: 'tcp', FromPort: spec.port, ToPort: spec.port, SourceSecurityGroupId: { 'Fn::GetAtt': [linkSg, 'GroupId'] } })]);
    const linkGroup = slResources[linkSg]!.Properties;
    // allowAllOutbound: false, and no inline rule: the one egress rule below is all.
    expect(linkGroup.SecurityGroupEgress ?? []).toEqual([]);
    const egress = ofType('AWS::EC2::SecurityGroupEgress').map(([, r]) => r.Properties).filter((r) => JSON.stringify(r.GroupId).includes(linkSg));
    expect(egress).toEqual([expect.objectContaining({ IpProtocol: 'tcp', FromPort: spec.port, ToPort: spec.port, DestinationSecurityGroupId: { 'Fn::GetAtt': [hostSg, 'GroupId'] } })]);
    const link = ofType('AWS::ApiGatewayV2::VpcLink').map(([, r]) => r.Properties);
    expect(link).toHaveLength(1);
    expect(link[0]!.SecurityGroupIds).toEqual([{ 'Fn::GetAtt': [linkSg, 'GroupId'] }]);
  });
});

describe('upload host: task definition and grants', () => {
  it('is the only task definition or function told UPLOAD_HOST, and listens on PORT', () => {
    const told = [...ofType('AWS::ECS::TaskDefinition'), ...ofType('AWS::Lambda::Function')].filter(([, r]) => JSON.stringify(r.Properties).includes(`"${ENV.uploadHost}"`)).map(([id]) => id);
    expect(told).toEqual([logicalId(host().task.taskDefinition)]);
    const app = (slResources[logicalId(host().task.taskDefinition)]!.Properties.ContainerDefinitions as any[]).find((c) => c.Name === APP_CONTAINER);
    expect(app.Environment).toEqual(expect.arrayContaining([{ Name: ENV.uploadHost, Value: 'true' }, { Name: ENV.port, Value: String(spec.port) }]));
    expect(app.Command).toContain('upload-host');
    expect(app.PortMappings).toEqual([expect.objectContaining({ ContainerPort: spec.port })]);
  });

  it('may list the parts of the uploads under tus/ of the uploads bucket, on top of the table entry\'s grants', () => {
    expect(spec.grants).toEqual({ table: 'RW', dataBucket: 'RW', uploadsBucket: 'RW', tusUploads: true });
    const role = logicalId(host().task.taskRole);
    const statements = ofType('AWS::IAM::Policy')
      .filter(([, p]) => asArray(p.Properties.Roles).some((r: any) => r.Ref === role))
      .flatMap(([, p]) => p.Properties.PolicyDocument.Statement as Statement[]);
    const listParts = statements.filter((s) => asArray(s.Action).includes('s3:ListMultipartUploadParts'));
    expect(listParts).toHaveLength(1);
    expect(asArray(listParts[0]!.Resource).map(render)).toEqual([expect.stringMatching(/\/tus\/\*$/)]);
    expect(JSON.stringify(listParts[0]!.Resource)).toContain(logicalId(stateful.uploadsBucket));
    // No upload events: the tus routes never put them.
    expect(statements.flatMap((s) => asArray(s.Action))).not.toContain('events:PutEvents');
  });
});
