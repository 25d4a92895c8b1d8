/**
 * Shared set-up of the CDK infra tests (test/infra/*.test.ts): synthesizes the stateful and
 * stateless stacks once per test file, with the context the CLI uses, and the helpers that read
 * the templates (logical ids, IAM statements of a function, actions on a resource, intrinsics as
 * text). Bundling (esbuild, every function) is the slow part: only files that look at the bundles
 * ask for it.
 */
import { readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { App, CfnElement, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import type { IConstruct } from 'constructs';
import { afterAll, beforeAll } from 'vitest';
import { ENV } from '../../functions/env-names.js';
import { FAMILIES, WORKERS, type Family, type FamilySpec } from '../../functions/http/route-table.js';
import type { AppFunction } from '../../lib/constructs/app-function.js';
import { StatefulStack } from '../../lib/stateful-stack.js';
import { StatelessStack, type Worker } from '../../lib/stateless-stack.js';

export const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const FAMILY_NAMES = Object.keys(FAMILIES) as Family[];
export const WORKER_NAMES = Object.keys(WORKERS) as Worker[];

/** Every function the tables declare: families and workers, with what the stack must give them. */
export interface DeclaredFunction {
  label: string;
  /** Set for route family functions. */
  family?: Family;
  fn: () => AppFunction;
  grants: FamilySpec['grants'];
  memoryMb: number;
  timeoutSeconds: number;
}
export const DECLARED: DeclaredFunction[] = [
  ...FAMILY_NAMES.map((family) => ({ label: `family ${family}`, family, fn: () => stateless.functions[family], ...FAMILIES[family] })),
  ...WORKER_NAMES.map((worker) => ({ label: `worker ${worker}`, fn: () => stateless.workers[worker], ...WORKERS[worker] })),
];

export type BucketGrant = 'dataBucket' | 'uploadsBucket' | 'artifactsBucket';
export const BUCKET_GRANTS: Record<BucketGrant, string> = {
  dataBucket: ENV.dataBucketName,
  uploadsBucket: ENV.uploadsBucketName,
  artifactsBucket: ENV.artifactsBucketName,
};

export interface Resource {
  Type: string;
  Properties: Record<string, any>;
  DeletionPolicy?: string;
  Metadata?: Record<string, any>;
}
export interface Statement {
  Effect: string;
  Action: string | string[];
  Resource: unknown;
}

// Set by synthesizeStacks' beforeAll; importers read them through ES module live bindings.
export let stateful: StatefulStack;
export let stateless: StatelessStack;
export let sfTemplate: Template;
export let slTemplate: Template;
export let slResources: Record<string, Resource>;
let assemblyDir: string;

/** Every app synthesizes into a fresh temp dir (bundles included); afterAll removes them. */
export const outdirs: string[] = [];
export function newApp(context: Record<string, unknown> = {}): App {
  const app = new App({ context });
  outdirs.push(app.outdir);
  return app;
}

export const logicalId = (c: IConstruct): string => {
  const el = c.node.defaultChild as CfnElement;
  return Stack.of(c).getLogicalId(el);
};
export const asArray = <T>(v: T | T[]): T[] => (Array.isArray(v) ? v : [v]);
export const ofType = (type: string) => Object.entries(slResources).filter(([, r]) => r.Type === type);
/** The synthesized asset folder (bundle root) of a function. */
export const assetDir = (fn: AppFunction): string => join(assemblyDir, slResources[logicalId(fn)]!.Metadata!['aws:asset:path']);

/** Allow statements of every IAM policy attached to the role of the given function. */
export function statementsOf(fnLogicalId: string): Statement[] {
  const fn = slResources[fnLogicalId]!;
  const roleId: string = fn.Properties.Role['Fn::GetAtt'][0];
  return ofType('AWS::IAM::Policy')
    .filter(([, p]) => asArray(p.Properties.Roles).some((r: any) => r.Ref === roleId))
    .flatMap(([, p]) => p.Properties.PolicyDocument.Statement as Statement[]);
}

/**
 * Actions granted on a stateful resource, found by its logical id inside the cross-stack
 * reference (`Fn::ImportValue: "...ExportsOutputFnGetAtt<LogicalId>Arn..."`).
 */
export function actionsOn(statements: Statement[], targetLogicalId: string): string[] {
  return statements
    .filter((s) => s.Effect === 'Allow' && asArray(s.Resource).some((r) => JSON.stringify(r).includes(targetLogicalId)))
    .flatMap((s) => asArray(s.Action));
}

/** An intrinsic as text: `{Ref}` and `{Id.Attr}` placeholders, Fn::Join joined. */
export function render(v: unknown): string {
  if (typeof v === 'string') return v;
  const o = v as Record<string, any> | null;
  if (o && 'Ref' in o) return `{${o.Ref}}`;
  if (o && 'Fn::GetAtt' in o) return `{${o['Fn::GetAtt'].join('.')}}`;
  if (o && 'Fn::Join' in o) return (o['Fn::Join'][1] as unknown[]).map(render).join(o['Fn::Join'][0]);
  return JSON.stringify(v);
}

/**
 * Registers the file's beforeAll (synthesize both stacks into a fresh app) and afterAll (remove
 * every app's output). `bundle: false` skips esbuild (the templates are the same but for asset
 * hashes): for files that look only at the templates.
 */
export function synthesizeStacks(options: { bundle: boolean }): void {
  beforeAll(() => {
    // Any attempt to bundle in Docker runs this and fails: bundling must use the local esbuild.
    process.env.CDK_DOCKER = '/bin/false';
    // Synthesize with the context the CLI uses: cdk.json, plus asset metadata (to find the bundles).
    const { context } = JSON.parse(readFileSync(join(REPO_ROOT, 'cdk.json'), 'utf8'));
    const app = newApp({ ...context, 'aws:cdk:enable-asset-metadata': true, ...(options.bundle ? {} : { 'aws:cdk:bundling-stacks': [] }) });
    stateful = new StatefulStack(app, 'LinkedDataPlatform-Stateful');
    stateless = new StatelessStack(app, 'LinkedDataPlatform-Stateless', {
      table: stateful.table,
      dataBucket: stateful.dataBucket,
      uploadsBucket: stateful.uploadsBucket,
      artifactsBucket: stateful.artifactsBucket,
    });
    sfTemplate = Template.fromStack(stateful);
    slTemplate = Template.fromStack(stateless);
    slResources = slTemplate.toJSON().Resources;
    assemblyDir = app.outdir;
  }, 300_000);

  afterAll(() => {
    for (const dir of outdirs) rmSync(dir, { recursive: true, force: true });
  });
}
