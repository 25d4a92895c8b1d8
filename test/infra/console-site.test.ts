/**
 * CDK: the console on AWS (lib/constructs/console-site.ts, issue 17). Synthesized as bin/platform.ts
 * does (the console stack beside the stateful and stateless stacks, cdk-nag's AwsSolutions pack),
 * without bundling: one CloudFront site whose default behaviour is the HTTP API (uncached, every
 * method, cookies and headers but Host forwarded) and whose `/console*` is the private build bucket
 * through Origin Access Control with the console's CSP; no unacknowledged finding, every
 * acknowledgement with its reason in the template.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Stack } from 'aws-cdk-lib';
import { afterAll, describe, expect, it } from 'vitest';
import { CONSOLE_CSP } from '../../functions/http/console-static.js';
import { ConsoleSite } from '../../lib/constructs/console-site.js';
import type { StatefulStack } from '../../lib/stateful-stack.js';
import { nagApp } from '../support/nag-app.js';

const STACK = 'LinkedDataPlatform-Console';
const buildDir = mkdtempSync(join(tmpdir(), 'ldp-console-build-'));
writeFileSync(join(buildDir, 'index.html'), '<!doctype html><div id="root"></div>');
afterAll(() => rmSync(buildDir, { recursive: true, force: true }));

let site: ConsoleSite;
const { app, synth } = nagApp({}, (stateless) => {
  const root = stateless.node.root;
  const stateful = root.node.findChild('LinkedDataPlatform-Stateful') as StatefulStack;
  const stack = new Stack(root, STACK);
  site = new ConsoleSite(stack, 'ConsoleSite', { api: stateless.api, buildDir, accessLogsBucket: stateful.accessLogsBucket });
});
const result = synth();
const template = JSON.parse(readFileSync(join(app.outdir, `${STACK}.template.json`), 'utf8')) as { Resources: Record<string, any> };
const ofType = (type: string) => Object.entries(template.Resources).filter(([, r]) => r.Type === type);
const logicalId = (c: { node: { defaultChild?: unknown } }) => Stack.of(site).getLogicalId(c.node.defaultChild as never);

describe('console site: CloudFront and S3', () => {
  it('has no cdk-nag finding left unacknowledged in the console stack', () => {
    const findings = (result.report?.pluginReports ?? []).flatMap((p) =>
      p.violations.flatMap((v) => v.violatingConstructs.map((c) => `${v.ruleName} at ${c.constructPath}`)),
    );
    expect(findings.filter((f) => f.includes(STACK))).toEqual([]);
    expect(result.error).toBeUndefined();
  });

  it('writes every acknowledgement into the template with its reason', () => {
    const acks = Object.values(template.Resources).flatMap((r) => r.Metadata?.cdk_nag?.rules_to_suppress ?? []) as { id: string; reason: string }[];
    expect(acks.length).toBeGreaterThan(0);
    for (const a of acks) expect(a.reason.length, a.id).toBeGreaterThan(30);
    // Bucket access logs are fixed (to the platform's access log bucket), not acknowledged.
    expect(acks.map((a) => a.id)).not.toContain('AwsSolutions-S1');
  });

  it('forwards the default behaviour to the HTTP API, uncached, every method, all but Host', () => {
    const [, dist] = ofType('AWS::CloudFront::Distribution')[0]!;
    const config = dist.Properties.DistributionConfig;
    const byId = Object.fromEntries(config.Origins.map((o: { Id: string }) => [o.Id, o]));
    const def = config.DefaultCacheBehavior;
    const apiOrigin = byId[def.TargetOriginId];
    expect(JSON.stringify(apiOrigin.DomainName)).toContain('execute-api');
    expect(apiOrigin.CustomOriginConfig.OriginProtocolPolicy).toBe('https-only');
    expect(def.AllowedMethods).toEqual(['GET', 'HEAD', 'OPTIONS', 'PUT', 'PATCH', 'POST', 'DELETE']);
    expect(def.ViewerProtocolPolicy).toBe('redirect-to-https');
    expect(def.CachePolicyId).toBe('4135ea2d-6df8-44a3-9df3-4b5a84be39ad'); // CachingDisabled
    expect(def.OriginRequestPolicyId).toBe('b689b0a8-53d0-40ab-baf2-68738e2966ac'); // AllViewerExceptHostHeader
    expect(config.ViewerCertificate ?? {}).not.toHaveProperty('MinimumProtocolVersion', 'TLSv1');
  });

  it('serves /console* from the private bucket through Origin Access Control, with the console CSP', () => {
    const [, dist] = ofType('AWS::CloudFront::Distribution')[0]!;
    const config = dist.Properties.DistributionConfig;
    const behaviours = config.CacheBehaviors as { PathPattern: string; TargetOriginId: string; ResponseHeadersPolicyId: unknown; AllowedMethods: string[] }[];
    expect(behaviours.map((b) => b.PathPattern)).toEqual(['/console*']);
    const origin = config.Origins.find((o: { Id: string }) => o.Id === behaviours[0]!.TargetOriginId);
    expect(origin.S3OriginConfig).toBeDefined();
    expect(origin.OriginAccessControlId).toBeDefined();
    expect(behaviours[0]!.AllowedMethods).toEqual(['GET', 'HEAD']);
    const [policyId, policy] = ofType('AWS::CloudFront::ResponseHeadersPolicy')[0]!;
    expect(behaviours[0]!.ResponseHeadersPolicyId).toEqual({ Ref: policyId });
    expect(policy.Properties.ResponseHeadersPolicyConfig.SecurityHeadersConfig.ContentSecurityPolicy.ContentSecurityPolicy).toBe(CONSOLE_CSP);

    const bucketId = logicalId(site.bucket);
    const bucket = template.Resources[bucketId];
    expect(bucket.Properties.PublicAccessBlockConfiguration).toEqual({ BlockPublicAcls: true, BlockPublicPolicy: true, IgnorePublicAcls: true, RestrictPublicBuckets: true });
    expect(bucket.Properties.LoggingConfiguration.LogFilePrefix).toBe('console-site/');
    const policies = ofType('AWS::S3::BucketPolicy').filter(([, p]) => JSON.stringify(p.Properties.Bucket) === JSON.stringify({ Ref: bucketId }));
    const statements = policies.flatMap(([, p]) => p.Properties.PolicyDocument.Statement) as { Effect: string; Principal?: { Service?: string }; Action: unknown; Condition?: unknown }[];
    // Reads only by this distribution (OAC), and never over plain HTTP.
    const reads = statements.filter((s) => s.Effect === 'Allow');
    expect(reads).toHaveLength(1);
    expect(reads[0]!.Principal?.Service).toBe('cloudfront.amazonaws.com');
    expect(reads[0]!.Action).toBe('s3:GetObject');
    expect(JSON.stringify(reads[0]!.Condition)).toContain('AWS:SourceArn');
    expect(statements.some((s) => s.Effect === 'Deny' && JSON.stringify(s.Condition).includes('aws:SecureTransport'))).toBe(true);
  });

  it('deploys the build under console/ (hashed assets immutable, index.html revalidated and invalidated)', () => {
    const deployments = ofType('Custom::CDKBucketDeployment').map(([, d]) => d.Properties);
    expect(deployments).toHaveLength(2);
    for (const d of deployments) expect(d.DestinationBucketKeyPrefix).toBe('console/');
    const index = deployments.find((d) => d.DistributionPaths)!;
    expect(index.DistributionPaths).toContain('/console/index.html');
    expect(index.SystemMetadata['cache-control']).toBe('no-cache');
    const assets = deployments.find((d) => !d.DistributionPaths)!;
    expect(assets.SystemMetadata['cache-control']).toContain('immutable');
  });
});
