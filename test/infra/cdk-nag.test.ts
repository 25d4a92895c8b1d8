/**
 * cdk-nag's AwsSolutions pack over both stacks, registered as bin/platform.ts registers it: zero
 * findings that are neither fixed nor acknowledged, and every acknowledgement written into the
 * template with its reason. Templates only, no bundling.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { App } from 'aws-cdk-lib';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { describe, expect, it } from 'vitest';
import { nagApp, type NagReport as Report } from '../support/nag-app.js';

/** `rule at path` of every finding in the report. */
const findings = (report: Report | undefined): string[] =>
  (report?.pluginReports ?? []).flatMap((p) => p.violations.flatMap((v) => v.violatingConstructs.map((c) => `${v.ruleName} at ${c.constructPath}`)));

interface Acknowledged {
  id: string;
  reason: string;
  resource: string;
}

function acknowledgements(app: App): Acknowledged[] {
  const out: Acknowledged[] = [];
  for (const stack of ['LinkedDataPlatform-Stateful', 'LinkedDataPlatform-Stateless']) {
    const template = JSON.parse(readFileSync(join(app.outdir, `${stack}.template.json`), 'utf8'));
    for (const [id, resource] of Object.entries<any>(template.Resources)) {
      for (const rule of resource.Metadata?.cdk_nag?.rules_to_suppress ?? []) out.push({ ...rule, resource: `${stack}/${id}` });
    }
  }
  return out;
}

describe('cdk-nag AwsSolutions', () => {
  const { app, synth } = nagApp();
  const result = synth();

  it('has zero unacknowledged findings in both stacks', () => {
    expect(findings(result.report)).toEqual([]);
    expect(result.error).toBeUndefined();
    // The validation ran (its report is written either way) and no plugin failed.
    expect(result.report).toBeDefined();
    expect(result.report!.pluginReports.filter((p) => p.conclusion !== 'success')).toEqual([]);
  });

  it('fixes rather than acknowledges the runtime (L1), the managed policy (IAM4) and bucket access logs but for the log bucket (S1)', () => {
    const acks = acknowledgements(app);
    const byRule = new Map<string, Set<string>>();
    for (const a of acks) {
      const rule = a.id.replace(/\[.*$/, '');
      byRule.set(rule, new Set([...(byRule.get(rule) ?? []), a.resource]));
    }
    // What an auditor reads from `cdk synth`: acknowledged rules and how many resources carry each.
    console.log(`cdk-nag acknowledgements by rule: ${JSON.stringify(Object.fromEntries([...byRule].map(([r, s]) => [r, s.size])))}`);
    expect([...byRule.keys()].filter((r) => r.startsWith('AwsSolutions-')).sort()).toEqual([
      'AwsSolutions-APIG4',
      'AwsSolutions-ECS2',
      'AwsSolutions-ECS4',
      'AwsSolutions-IAM5',
      'AwsSolutions-S1',
      // The SPARQL hosts' Virtuoso dba password: each host makes a new database with it.
      'AwsSolutions-SMG4',
    ]);
    // The rest are CDK's own acknowledgements of its template validations, not ours: the VPC's
    // subnets name the stack's AZs (W3010), and flow logs' destination options (F3002, F3003).
    expect([...byRule.keys()].filter((r) => !r.startsWith('AwsSolutions-')).sort()).toEqual([
      'CloudFormation-Validate::F3002',
      'CloudFormation-Validate::F3003',
      'CloudFormation-Validate::W3010',
    ]);
    // ECS2 (environment in the task definition) and ECS4 (Container Insights) only on the containers' resources.
    for (const r of [...byRule.get('AwsSolutions-ECS2')!, ...byRule.get('AwsSolutions-ECS4')!]) expect(r).toMatch(/^LinkedDataPlatform-Stateless\/(Containers|\w+Task)/);
    // S1 only on the access log bucket itself.
    expect([...byRule.get('AwsSolutions-S1')!].every((r) => r.startsWith('LinkedDataPlatform-Stateful/AccessLogsBucket'))).toBe(true);
    // APIG4 only on the HTTP API's own resources (routes, integrations, stage).
    for (const r of byRule.get('AwsSolutions-APIG4')!) expect(r).toMatch(/^LinkedDataPlatform-Stateless\/(HttpApi|DefaultStage)/);
  });

  it('gives every acknowledgement a reason, in the template', () => {
    const acks = acknowledgements(app);
    expect(acks.length).toBeGreaterThan(0);
    for (const a of acks) expect(a.reason.trim().length, `${a.id} on ${a.resource}`).toBeGreaterThan(40);
  });

  it('acknowledges wildcards only where no ARN can be narrower: actions without resources, run-time objects, state machines, executions and schedules', () => {
    const wildcards = new Set(acknowledgements(app).filter((a) => a.id.startsWith('AwsSolutions-IAM5')).map((a) => a.id));
    const allowed = [
      /^AwsSolutions-IAM5\[Resource::\*\]$/, // X-Ray, task tokens
      /^AwsSolutions-IAM5\[Resource::LinkedDataPlatform-Stateful:ExportsOutputFnGetAtt(DataBucket\w+\/datasets|UploadsBucket\w+(\/tus)?|ArtifactsBucket\w+)\/\*\]$/, // tus/: uploads named at creation
      /^AwsSolutions-IAM5\[Resource::arn:<AWS::Partition>:states:<AWS::Region>:<AWS::AccountId>:(stateMachine:[\w-]+-flow-\*|execution:[\w-]+-flow-\*:\*)\]$/,
      // ECS tasks of the platform's cluster (task ARNs are made at RunTask): DescribeTasks of the worker task.
      /^AwsSolutions-IAM5\[Resource::arn:<AWS::Partition>:ecs:<AWS::Region>:<AWS::AccountId>:task\/<ContainersCluster\w+>\/\*\]$/,
      /^AwsSolutions-IAM5\[Resource::arn:<AWS::Partition>:scheduler:<AWS::Region>:<AWS::AccountId>:schedule\/[\w-]+-schedules\/flow-schedule-\*\]$/,
    ];
    expect(wildcards.size).toBeGreaterThan(0);
    for (const id of wildcards) expect(allowed.some((re) => re.test(id)), id).toBe(true);
    // No wildcard actions at all (s3:GetObject*, s3:List*, ...): every action is named.
    for (const id of wildcards) expect(id).not.toContain('Action::');
  });

  it('fails the synth on a wildcard nobody acknowledged', () => {
    const broken = nagApp({}, (stateless) => {
      stateless.functions.info.addToRolePolicy(new PolicyStatement({ actions: ['s3:GetObject'], resources: ['arn:aws:s3:::some-bucket/*'] }));
    }).synth();
    expect(broken.error).toBeDefined();
    expect(findings(broken.report)).toEqual(['AwsSolutions-IAM5[Resource::arn:aws:s3:::some-bucket/*] at LinkedDataPlatform-Stateless/InfoFunctionRole/DefaultPolicy/Resource']);
  });
});
