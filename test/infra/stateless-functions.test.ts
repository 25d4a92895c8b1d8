import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { basename, dirname, join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { App, CfnElement, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { Code, Function as LambdaFunction, Runtime } from 'aws-cdk-lib/aws-lambda';
import { Bucket } from 'aws-cdk-lib/aws-s3';
import { TableV2, AttributeType } from 'aws-cdk-lib/aws-dynamodb';
import type { IConstruct } from 'constructs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TABLE_SCHEMA } from '../../functions/adapters/aws/table-schema.js';
import { ENV } from '../../functions/env-names.js';
import { FAMILIES, ROUTES, WORKERS, routeKey, type Access, type Family, type FamilySpec, type WorkerSpec } from '../../functions/http/route-table.js';
import {
  ENGINE_WORKER,
  ENGINE_WORKER_MODULES,
  FLOW_EXECUTION_ACTIONS,
  FLOW_TASK_TOKEN_ACTIONS,
  FLOW_SCHEDULE_ACTIONS,
  INSTALLED_MODULES,
  SPARQL_PARSE_WORKER,
  SPARQL_PARSE_WORKER_MODULES,
  RDF_PARSE_WORKER,
  bindBucket,
  bindTable,
  sesIdentityArns,
  type AppFunction,
} from '../../lib/constructs/app-function.js';
import { ASSET_KEY_WILDCARD, UPLOAD_EVENT_SOURCE, UPLOAD_EVENT_TYPES } from '../../functions/adapters/aws/eventbridge-upload-events.js';
import { FLOW_SCHEDULE_NAME_PREFIX } from '../../functions/adapters/aws/eventbridge-scheduler.js';
import { SPILLED_RESPONSES_PREFIX, StatefulStack } from '../../lib/stateful-stack.js';
import { DEFAULT_MAIL_FROM, FINAL_EXECUTION_STATUSES, FLOW_PREFIX_MAX, StatelessStack, defaultFlowPrefix, type Worker } from '../../lib/stateless-stack.js';

const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const FAMILY_NAMES = Object.keys(FAMILIES) as Family[];
const WORKER_NAMES = Object.keys(WORKERS) as Worker[];

/** Every function the tables declare: families and workers, with what the stack must give them. */
interface DeclaredFunction {
  label: string;
  /** Set for route family functions. */
  family?: Family;
  fn: () => AppFunction;
  grants: FamilySpec['grants'];
  memoryMb: number;
  timeoutSeconds: number;
}
const DECLARED: DeclaredFunction[] = [
  ...FAMILY_NAMES.map((family) => ({ label: `family ${family}`, family, fn: () => stateless.functions[family], ...FAMILIES[family] })),
  ...WORKER_NAMES.map((worker) => ({ label: `worker ${worker}`, fn: () => stateless.workers[worker], ...WORKERS[worker] })),
];

type BucketGrant = 'dataBucket' | 'uploadsBucket' | 'artifactsBucket';
const BUCKET_GRANTS: Record<BucketGrant, string> = {
  dataBucket: ENV.dataBucketName,
  uploadsBucket: ENV.uploadsBucketName,
  artifactsBucket: ENV.artifactsBucketName,
};

interface Resource {
  Type: string;
  Properties: Record<string, any>;
  DeletionPolicy?: string;
  Metadata?: Record<string, any>;
}
interface Statement {
  Effect: string;
  Action: string | string[];
  Resource: unknown;
}

let stateful: StatefulStack;
let stateless: StatelessStack;
let sfTemplate: Template;
let slTemplate: Template;
let slResources: Record<string, Resource>;
let assemblyDir: string;

/** Every app synthesizes into a fresh temp dir (bundles included); afterAll removes them. */
const outdirs: string[] = [];
function newApp(context: Record<string, unknown> = {}): App {
  const app = new App({ context });
  outdirs.push(app.outdir);
  return app;
}

const logicalId = (c: IConstruct): string => {
  const el = c.node.defaultChild as CfnElement;
  return Stack.of(c).getLogicalId(el);
};
const asArray = <T>(v: T | T[]): T[] => (Array.isArray(v) ? v : [v]);
const ofType = (type: string) => Object.entries(slResources).filter(([, r]) => r.Type === type);
/** The synthesized asset folder (bundle root) of a function. */
const assetDir = (fn: AppFunction): string => join(assemblyDir, slResources[logicalId(fn)]!.Metadata!['aws:asset:path']);

/** Allow statements of every IAM policy attached to the role of the given function. */
function statementsOf(fnLogicalId: string): Statement[] {
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
function actionsOn(statements: Statement[], targetLogicalId: string): string[] {
  return statements
    .filter((s) => s.Effect === 'Allow' && asArray(s.Resource).some((r) => JSON.stringify(r).includes(targetLogicalId)))
    .flatMap((s) => asArray(s.Action));
}

beforeAll(() => {
  // Any attempt to bundle in Docker runs this and fails: bundling must use the local esbuild.
  process.env.CDK_DOCKER = '/bin/false';
  // Synthesize with the context the CLI uses: cdk.json, plus asset metadata (to find the bundles).
  const { context } = JSON.parse(readFileSync(join(REPO_ROOT, 'cdk.json'), 'utf8'));
  const app = newApp({ ...context, 'aws:cdk:enable-asset-metadata': true });
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

describe('stateless stack: functions', () => {
  it('has exactly one function per family and per worker: nodejs22.x, arm64, traced, sized from the tables', () => {
    expect(ofType('AWS::Lambda::Function')).toHaveLength(FAMILY_NAMES.length + WORKER_NAMES.length);
    const ids = new Set(DECLARED.map((d) => logicalId(d.fn())));
    expect(ids.size).toBe(DECLARED.length);
    for (const d of DECLARED) {
      const fn = slResources[logicalId(d.fn())]!;
      expect(fn.Type, d.label).toBe('AWS::Lambda::Function');
      expect(fn.Properties, d.label).toMatchObject({
        Runtime: 'nodejs22.x',
        Architectures: ['arm64'],
        Handler: 'index.handler',
        MemorySize: d.memoryMb,
        Timeout: d.timeoutSeconds,
        TracingConfig: { Mode: 'Active' },
      });
    }
  });

  it('builds each function from its own handler module', () => {
    for (const family of FAMILY_NAMES) expect(stateless.functions[family].entryName).toBe(family);
    for (const worker of WORKER_NAMES) {
      expect(stateless.workers[worker].entryName).toBe(WORKERS[worker].handler);
      expect(existsSync(join(REPO_ROOT, 'functions', 'handlers', `${WORKERS[worker].handler}.ts`))).toBe(true);
    }
  });

  it('bundles every function locally with esbuild into an ESM file with the SDK inside', () => {
    for (const d of DECLARED) {
      const fn = slResources[logicalId(d.fn())]!;
      expect(fn.Metadata?.['aws:asset:is-bundled']).toBe(true);
      const bundle = join(assetDir(d.fn()), 'index.mjs');
      expect(existsSync(bundle), bundle).toBe(true);
      const code = readFileSync(bundle, 'utf8');
      expect(code.startsWith('import { createRequire')).toBe(true);
      // No runtime import of the SDK: we ship the pinned version.
      expect(code).not.toMatch(/from\s*["']@aws-sdk\//);
      expect(existsSync(`${bundle}.map`)).toBe(true);
    }
  });

  it('gives every function its own log group with retention', () => {
    const logGroupIds = new Set<string>();
    for (const d of DECLARED) {
      const fn = slResources[logicalId(d.fn())]!;
      const logGroupId: string = fn.Properties.LoggingConfig.LogGroup.Ref;
      const logGroup = slResources[logGroupId]!;
      expect(logGroup.Type).toBe('AWS::Logs::LogGroup');
      expect(logGroup.Properties.RetentionInDays).toBeGreaterThan(0);
      logGroupIds.add(logGroupId);
    }
    expect(logGroupIds.size).toBe(DECLARED.length);
  });

  it('sets TABLE_NAME and bucket variables exactly where FAMILIES and WORKERS grant access', () => {
    for (const { label: family, fn, grants } of DECLARED) {
      const vars: Record<string, unknown> = slResources[logicalId(fn())]!.Properties.Environment?.Variables ?? {};
      if (grants.table) expect(JSON.stringify(vars[ENV.tableName])).toContain(logicalId(stateful.table));
      else expect(vars).not.toHaveProperty(ENV.tableName);
      for (const [grant, envName] of Object.entries(BUCKET_GRANTS) as [BucketGrant, string][]) {
        if (grants[grant]) expect(JSON.stringify(vars[envName])).toContain(logicalId(stateful[grant]));
        else expect(vars, `${family} must not see ${envName}`).not.toHaveProperty(envName);
      }
    }
  });

  it('grants each function exactly the table and bucket access FAMILIES and WORKERS say', () => {
    const tableId = logicalId(stateful.table);
    for (const declared of DECLARED) {
      const { label: family, fn, grants } = declared;
      const runsFlows = Boolean(grants.flowExecutions) || Boolean((declared as { flows?: boolean }).flows);
      const statements = statementsOf(logicalId(fn()));
      const all = statements.flatMap((s) => asArray(s.Action));

      // Nothing is granted on "*" except X-Ray tracing and, to functions that run flows, the two
      // task-token actions (which take no resource scoping).
      for (const s of statements.filter((st) => asArray(st.Resource).includes('*'))) {
        for (const action of asArray(s.Action)) {
          if ((FLOW_TASK_TOKEN_ACTIONS as readonly string[]).includes(action)) expect(runsFlows, family).toBe(true);
          else expect(action, family).toMatch(/^xray:/);
        }
      }

      const onTable = actionsOn(statements, tableId);
      if (grants.table === 'RW') {
        expect(onTable).toEqual(expect.arrayContaining(['dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem']));
      } else if (grants.table === 'R') {
        expect(onTable).toEqual(expect.arrayContaining(['dynamodb:GetItem', 'dynamodb:Query']));
        for (const write of ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:BatchWriteItem']) {
          expect(all, `${family} must not ${write}`).not.toContain(write);
        }
      } else {
        expect(all.filter((a) => a.startsWith('dynamodb:'))).toEqual([]);
      }
      // DynamoDB actions only ever target the table.
      const dynamoStatements = statements.filter((s) => asArray(s.Action).some((a) => a.startsWith('dynamodb:')));
      for (const s of dynamoStatements) expect(JSON.stringify(s.Resource)).toContain(tableId);

      for (const grant of Object.keys(BUCKET_GRANTS) as BucketGrant[]) {
        const onBucket = actionsOn(statements, logicalId(stateful[grant]));
        const access: Access | undefined = grants[grant];
        if (access === 'RW') {
          expect(onBucket).toEqual(expect.arrayContaining(['s3:GetObject*', 's3:PutObject', 's3:DeleteObject*']));
        } else if (access === 'R') {
          expect(onBucket).toEqual(expect.arrayContaining(['s3:GetObject*']));
          expect(onBucket).not.toContain('s3:PutObject');
          expect(onBucket).not.toContain('s3:DeleteObject*');
        } else {
          expect(onBucket, `${family} must not touch ${grant}`).toEqual([]);
        }
      }
      const hasBucketGrant = (Object.keys(BUCKET_GRANTS) as BucketGrant[]).some((g) => grants[g]);
      if (!hasBucketGrant) expect(all.filter((a) => a.startsWith('s3:'))).toEqual([]);
    }
  });
});

/**
 * Run in a function's asset folder on plain Node, as Lambda would (fresh process, Lambda's
 * NODE_OPTIONS, nothing of the repo on the resolution path): load the bundle, resolve oxigraph,
 * and run a SPARQL query in the engine's worker thread started the way the engine starts it
 * (`new URL('./worker.mjs', <bundle URL>)`).
 */
const LOAD_BUNDLE_SCRIPT = `
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { MessageChannel, Worker } from 'node:worker_threads';
const bundleUrl = pathToFileURL(process.cwd() + '/index.mjs');
const out = {};
try {
  const bundle = await import(bundleUrl.href);
  out.handler = typeof bundle.handler;
  const require = createRequire(bundleUrl);
  out.resolved = require.resolve('oxigraph');
  out.storeSize = new (require('oxigraph').Store)().size;
  const worker = new Worker(new URL('./worker.mjs', bundleUrl));
  const ask = (m) => new Promise((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
    worker.postMessage(m);
  });
  // The engine's load protocol: chunks on a port, acknowledged one by one, then done.
  const { port1, port2 } = new MessageChannel();
  port1.on('message', () => port1.postMessage({ done: true }));
  const loaded = new Promise((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
    worker.postMessage({ id: 1, type: 'loadStream', port: port2 }, [port2]);
  });
  port1.postMessage({ chunk: '<urn:s> <urn:p> "o" <urn:g> .\\n' });
  const load = await loaded;
  port1.close();
  if (!load.ok) throw new Error(load.error);
  const reply = await ask({ id: 2, type: 'query', query: 'SELECT (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } }', format: 'application/sparql-results+json' });
  if (!reply.ok) throw new Error(reply.error);
  out.count = JSON.parse(reply.result).results.bindings[0].n.value;
  await worker.terminate();
  // The SPARQL parser's worker, started the way the parser pool starts it (it imports sparqljs).
  const parser = new Worker(new URL('./sparql-parse-worker.mjs', bundleUrl));
  const parsed = await new Promise((resolve, reject) => {
    parser.once('message', resolve);
    parser.once('error', reject);
    parser.postMessage({ id: 1, type: 'analyze', text: 'ASK { ?s ?p ?o }' });
  });
  if (!parsed.ok) throw new Error(parsed.error);
  out.parsedForm = parsed.result.form;
  await parser.terminate();
  // The RDF parse worker (oxigraph's JSON-LD and RDF/XML parsers), driven by its lockstep protocol.
  const rdfParser = new Worker(new URL('./rdf-parse-worker.mjs', bundleUrl));
  const signal = new Int32Array(new SharedArrayBuffer(4));
  const channel = new MessageChannel();
  const rdfQuads = [];
  out.rdfParsed = await new Promise((resolve, reject) => {
    rdfParser.once('error', reject);
    const reply = (m) => {
      channel.port1.postMessage(m);
      Atomics.add(signal, 0, 1);
      Atomics.notify(signal, 0);
    };
    let sent = false;
    channel.port1.on('message', (m) => {
      if (m.type === 'need') {
        reply(sent ? { done: true } : { chunk: Buffer.from('{"@id":"urn:s","urn:p":"o"}') });
        sent = true;
      } else if (m.type === 'quads') {
        rdfQuads.push(...m.quads);
        reply({ ack: true });
      } else if (m.type === 'end') resolve(rdfQuads.map((q) => q.subject.value + ' ' + q.object.value).join());
      else reject(new Error(m.message));
    });
    rdfParser.postMessage({ type: 'parse', port: channel.port2, signal, format: 'application/ld+json', batchSize: 100 }, [channel.port2]);
  });
  channel.port1.close();
  await rdfParser.terminate();
} catch (e) {
  out.error = String(e?.stack ?? e);
}
process.stdout.write(JSON.stringify(out));
process.exit(0); // whatever the bundle left open (sockets, timers) must not hang the test
`;

/** Runs `tasks` with at most `limit` in flight. */
async function pooled<T>(limit: number, tasks: (() => Promise<T>)[]): Promise<T[]> {
  const results: T[] = new Array(tasks.length);
  let next = 0;
  const run = async (): Promise<void> => {
    while (next < tasks.length) {
      const i = next++;
      results[i] = await tasks[i]!();
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, tasks.length) }, run));
  return results;
}

describe('stateless stack: function bundles', () => {
  const lock = JSON.parse(readFileSync(join(REPO_ROOT, 'package-lock.json'), 'utf8'));

  it('installs the INSTALLED_MODULES (oxigraph) at the package-lock.json version next to every bundle, not inside it', () => {
    for (const d of DECLARED) {
      const dir = assetDir(d.fn());
      const code = readFileSync(join(dir, 'index.mjs'), 'utf8');
      // node_modules/.package-lock.json: what `npm ci` installed.
      const installed = JSON.parse(readFileSync(join(dir, 'node_modules', '.package-lock.json'), 'utf8'));
      for (const mod of INSTALLED_MODULES) {
        const locked = lock.packages[`node_modules/${mod}`];
        expect(locked, `${mod} is in package-lock.json`).toBeDefined();
        expect(installed.packages[`node_modules/${mod}`], d.label).toMatchObject({ version: locked.version, integrity: locked.integrity });
        const pkg = JSON.parse(readFileSync(join(dir, 'node_modules', mod, 'package.json'), 'utf8'));
        expect(pkg.version, d.label).toBe(locked.version);
        // Imported at run time, not bundled.
        expect(code, d.label).toMatch(new RegExp(`from\\s*["']${mod}["']`));
      }
      // oxigraph's WASM glue stays in its package, next to the WASM it loads.
      expect(code, d.label).not.toContain('node_bg.wasm');
      expect(existsSync(join(dir, 'node_modules', 'oxigraph', 'node_bg.wasm')), d.label).toBe(true);
      // The browser build is pruned, and the project lockfile `npm ci` used is not shipped.
      expect(existsSync(join(dir, 'node_modules', 'oxigraph', 'web_bg.wasm')), d.label).toBe(false);
      expect(existsSync(join(dir, 'package-lock.json')), d.label).toBe(false);
    }
  });

  it("copies the SPARQL engine's worker module next to every bundle", () => {
    const source = readFileSync(ENGINE_WORKER, 'utf8');
    // The engine resolves it relative to its own module, which in a bundle is index.mjs.
    expect(readFileSync(join(dirname(ENGINE_WORKER), 'oxigraph-engine.ts'), 'utf8')).toContain("new URL('./worker.mjs', import.meta.url)");
    expect(readFileSync(join(dirname(RDF_PARSE_WORKER), 'worker-pool.ts'), 'utf8')).toContain("new URL('./rdf-parse-worker.mjs', import.meta.url)");
    for (const d of DECLARED) {
      expect(readFileSync(join(assetDir(d.fn()), 'worker.mjs'), 'utf8'), d.label).toBe(source);
      for (const module of [...ENGINE_WORKER_MODULES, SPARQL_PARSE_WORKER, ...SPARQL_PARSE_WORKER_MODULES, RDF_PARSE_WORKER]) {
        expect(readFileSync(join(assetDir(d.fn()), basename(module)), 'utf8'), `${d.label}: ${basename(module)}`).toBe(readFileSync(module, 'utf8'));
      }
    }
  });

  it('every bundle loads on plain Node from its asset folder, exports handler, and runs SPARQL in a worker thread', async () => {
    const run = promisify(execFile);
    // A file, not `-e`: worker threads inherit the process's execArgv (`--input-type` would break them).
    const scriptDir = mkdtempSync(join(tmpdir(), 'load-bundle-'));
    outdirs.push(scriptDir);
    const script = join(scriptDir, 'load-bundle.mjs');
    writeFileSync(script, LOAD_BUNDLE_SCRIPT);
    const results = await pooled(
      Math.max(1, Math.min(4, availableParallelism())),
      DECLARED.map((d) => async () => {
        const cwd = assetDir(d.fn());
        const { stdout } = await run(process.execPath, [script], {
          cwd,
          // Only what Lambda would have; no vitest/tsx loaders or NODE_PATH.
          env: { PATH: process.env.PATH ?? '', NODE_OPTIONS: '--enable-source-maps', AWS_REGION: 'eu-west-1' },
          timeout: 60_000,
        });
        return { d, cwd, out: JSON.parse(stdout) };
      }),
    );
    for (const { d, cwd, out } of results) {
      expect(out.error, d.label).toBeUndefined();
      expect(out.handler, d.label).toBe('function');
      expect(out.resolved.startsWith(cwd + sep), `${d.label} resolves oxigraph in its asset: ${out.resolved}`).toBe(true);
      expect(out.storeSize, d.label).toBe(0);
      expect(out.count, d.label).toBe('1');
      expect(out.parsedForm, d.label).toBe('ask');
      expect(out.rdfParsed, d.label).toBe('urn:s o');
    }
  }, 120_000);
});

describe('stateless stack: workers', () => {
  const invokers = (worker: Worker): readonly Family[] => WORKERS[worker].invokedBy;

  it('lets only the invokedBy families invoke each worker, and nothing else invoke anything', () => {
    const workerIds = new Set(WORKER_NAMES.map((w) => logicalId(stateless.workers[w])));
    for (const { label, family, fn } of DECLARED) {
      const statements = statementsOf(logicalId(fn()));
      const lambdaStatements = statements.filter((s) => asArray(s.Action).some((a) => a.startsWith('lambda:')));
      // Only ever lambda:InvokeFunction, and only on workers.
      for (const s of lambdaStatements) {
        expect(asArray(s.Action), label).toEqual(['lambda:InvokeFunction']);
        for (const r of asArray(s.Resource)) {
          const target = [...workerIds].filter((id) => JSON.stringify(r).includes(id));
          expect(target, `${label}: ${JSON.stringify(r)}`).toHaveLength(1);
        }
      }
      const expected = WORKER_NAMES.filter((w) => family !== undefined && invokers(w).includes(family));
      for (const worker of WORKER_NAMES) {
        const onWorker = actionsOn(statements, logicalId(stateless.workers[worker]));
        if (expected.includes(worker)) expect(onWorker, `${label} must invoke ${worker}`).toContain('lambda:InvokeFunction');
        else expect(onWorker, `${label} must not invoke ${worker}`).toEqual([]);
      }
      if (expected.length === 0) expect(lambdaStatements, `${label} must not invoke anything`).toEqual([]);
    }
  });

  it('tells the invokedBy families (and only them) the worker function name', () => {
    for (const worker of WORKER_NAMES) {
      const { envName } = WORKERS[worker] as WorkerSpec;
      if (!envName) {
        // Invoked by an AWS service (invokedByService), never by a family.
        expect(invokers(worker), worker).toEqual([]);
        continue;
      }
      const workerId = logicalId(stateless.workers[worker]);
      for (const { label, family, fn } of DECLARED) {
        const vars: Record<string, unknown> = slResources[logicalId(fn())]!.Properties.Environment?.Variables ?? {};
        if (family && invokers(worker).includes(family)) expect(vars[envName], label).toEqual({ Ref: workerId });
        else expect(vars, `${label} must not see ${envName}`).not.toHaveProperty(envName);
      }
    }
  });

  it('configures asynchronous invocation: one retry, bounded event age (not for the synchronously invoked Step Functions worker)', () => {
    const configs = ofType('AWS::Lambda::EventInvokeConfig');
    const sync = (w: Worker) => (WORKERS[w] as WorkerSpec).invokedByService === 'stepFunctions';
    expect(configs).toHaveLength(WORKER_NAMES.filter((w) => !sync(w)).length);
    for (const worker of WORKER_NAMES) {
      const matches = configs.filter(([, c]) => JSON.stringify(c.Properties.FunctionName) === JSON.stringify({ Ref: logicalId(stateless.workers[worker]) }));
      if (sync(worker)) {
        expect(matches, worker).toHaveLength(0);
        continue;
      }
      expect(matches, worker).toHaveLength(1);
      const props = matches[0]![1].Properties;
      expect(props.MaximumRetryAttempts).toBe(1);
      expect(props.MaximumEventAgeInSeconds).toBeGreaterThanOrEqual(60);
      expect(props.MaximumEventAgeInSeconds).toBeLessThanOrEqual(6 * 3600);
    }
  });

  it('gives no worker an API route, integration or API Gateway permission', () => {
    for (const worker of WORKER_NAMES) {
      const id = logicalId(stateless.workers[worker]);
      for (const [, integration] of ofType('AWS::ApiGatewayV2::Integration')) {
        expect(JSON.stringify(integration.Properties.IntegrationUri)).not.toContain(id);
      }
      for (const [, permission] of ofType('AWS::Lambda::Permission').filter(([, p]) => p.Properties.Principal === 'apigateway.amazonaws.com')) {
        expect(JSON.stringify(permission.Properties.FunctionName)).not.toContain(id);
      }
    }
  });
});

/** An intrinsic as text: `{Ref}` and `{Id.Attr}` placeholders, Fn::Join joined. */
function render(v: unknown): string {
  if (typeof v === 'string') return v;
  const o = v as Record<string, any> | null;
  if (o && 'Ref' in o) return `{${o.Ref}}`;
  if (o && 'Fn::GetAtt' in o) return `{${o['Fn::GetAtt'].join('.')}}`;
  if (o && 'Fn::Join' in o) return (o['Fn::Join'][1] as unknown[]).map(render).join(o['Fn::Join'][0]);
  return JSON.stringify(v);
}

describe('stateless stack: flows', () => {
  const spec = (w: Worker): WorkerSpec => WORKERS[w];
  const TASK_WORKER = WORKER_NAMES.filter((w) => spec(w).invokedByService === 'stepFunctions');
  const SETTLE_WORKERS = WORKER_NAMES.filter((w) => spec(w).invokedByService === 'flowExecutionEvents');
  const FLOW_WORKERS = WORKER_NAMES.filter((w) => spec(w).flows);
  const ARN = (resource: string, name: string) => `arn:{AWS::Partition}:states:{AWS::Region}:{AWS::AccountId}:${resource}:${name}`;
  const stateMachines = () => ARN('stateMachine', `${stateless.flowStateMachinePrefix}-*`);
  const executions = () => ARN('execution', `${stateless.flowStateMachinePrefix}-*:*`);
  const roleArn = () => ({ 'Fn::GetAtt': [logicalId(stateless.flowStateMachineRole), 'Arn'] });
  const scheduleRoleArn = () => ({ 'Fn::GetAtt': [logicalId(stateless.flowScheduleRole), 'Arn'] });
  const fnArn = (w: Worker) => ({ 'Fn::GetAtt': [logicalId(stateless.workers[w]), 'Arn'] });
  const varsOf = (fn: AppFunction): Record<string, unknown> => slResources[logicalId(fn)]!.Properties.Environment?.Variables ?? {};
  /** Actions of `states:` statements by resource (rendered), and the `iam:` statements. */
  const flowStatements = (fn: AppFunction) => {
    const statements = statementsOf(logicalId(fn));
    const states = new Map<string, Set<string>>();
    for (const st of statements.filter((x) => asArray(x.Action).some((a) => a.startsWith('states:')))) {
      expect(asArray(st.Action).every((a) => a.startsWith('states:')), 'states actions are not mixed with others').toBe(true);
      for (const r of asArray(st.Resource)) {
        const key = render(r);
        states.set(key, new Set([...(states.get(key) ?? []), ...asArray(st.Action)]));
      }
    }
    return { states, iam: statements.filter((x) => asArray(x.Action).some((a) => a.startsWith('iam:'))) as (Statement & { Condition?: unknown })[] };
  };
  const sorted = (xs: Iterable<string>) => [...xs].sort();

  it('declares the flow task worker (Step Functions) and the flow settle worker (execution events)', () => {
    expect(TASK_WORKER).toEqual(['flowTaskWorker']);
    expect(SETTLE_WORKERS).toEqual(['flowSettle']);
    expect(WORKERS.flowTaskWorker).toMatchObject({
      handler: 'flow-task-worker',
      grants: { table: 'RW', dataBucket: 'RW', uploadsBucket: 'RW', artifactsBucket: 'RW' },
      memoryMb: 3008,
      timeoutSeconds: 900,
      invokedBy: [],
    });
    expect(WORKERS.flowSettle).toMatchObject({ handler: 'flow-settle', grants: { table: 'RW', artifactsBucket: 'RW' }, invokedBy: [] });
    expect(WORKERS.flowSettle.grants).not.toHaveProperty('dataBucket');
    // The import worker is still invoked by families only.
    expect(spec('importWorker').invokedByService).toBeUndefined();
    // Both flow handlers are among the bundles every test above loads on plain Node.
    expect(DECLARED.map((d) => d.fn().entryName)).toEqual(expect.arrayContaining(['flow-task-worker', 'flow-settle']));
  });

  it('names state machines under a short prefix derived from the stack name', () => {
    expect(stateless.flowStateMachinePrefix).toBe(defaultFlowPrefix('LinkedDataPlatform-Stateless'));
    expect(stateless.flowStateMachinePrefix).toBe('LinkedDataPlatform-Stateless-flow');
    const long = defaultFlowPrefix('A-very-long-stack-name-for-a-test-deployment-of-the-platform');
    // Room for `-<24-character uid>-v<version>` within Step Functions' 80 characters.
    expect(FLOW_PREFIX_MAX + 1 + 24 + 2 + 6).toBeLessThanOrEqual(80);
    expect(long.length).toBeLessThanOrEqual(FLOW_PREFIX_MAX);
    expect(long).toMatch(/^A-very-long-[A-Za-z0-9_-]*-[0-9a-f]{8}-flow$/);
    expect(defaultFlowPrefix('A-very-long-stack-name-for-a-test-deployment-of-the-platform-2')).not.toBe(long);
  });

  it('has a state machine role only Step Functions (for our state machines) assumes, allowed only to invoke the task worker', () => {
    const role = slResources[logicalId(stateless.flowStateMachineRole)]!;
    expect(role.Type).toBe('AWS::IAM::Role');
    const trust = role.Properties.AssumeRolePolicyDocument.Statement as any[];
    expect(trust).toHaveLength(1);
    expect(trust[0]).toMatchObject({ Action: 'sts:AssumeRole', Effect: 'Allow', Principal: { Service: 'states.amazonaws.com' } });
    expect(trust[0].Condition.StringEquals).toEqual({ 'aws:SourceAccount': { Ref: 'AWS::AccountId' } });
    expect(render(trust[0].Condition.ArnLike['aws:SourceArn'])).toBe(stateMachines());
    expect(role.Properties.ManagedPolicyArns).toBeUndefined();
    expect(role.Properties.Policies).toBeUndefined();

    const roleId = logicalId(stateless.flowStateMachineRole);
    const statements = ofType('AWS::IAM::Policy')
      .filter(([, p]) => asArray(p.Properties.Roles).some((r: any) => r.Ref === roleId))
      .flatMap(([, p]) => p.Properties.PolicyDocument.Statement as Statement[]);
    expect(statements.length).toBeGreaterThan(0);
    const taskWorkerId = logicalId(stateless.workers.flowTaskWorker);
    for (const st of statements) {
      expect(st.Effect).toBe('Allow');
      expect(asArray(st.Action)).toEqual(['lambda:InvokeFunction']);
      for (const r of asArray(st.Resource)) expect(JSON.stringify(r)).toContain(taskWorkerId);
    }
  });

  it('lets the families granted flowExecutions manage only the prefixed state machines and executions, and pass only that role to Step Functions', () => {
    const managers = FAMILY_NAMES.filter((f) => (FAMILIES[f] as FamilySpec).grants.flowExecutions);
    expect(managers).toContain('flows');
    for (const family of managers) {
      const { states, iam } = flowStatements(stateless.functions[family]);
      expect(sorted(states.keys()), family).toEqual(sorted([stateMachines(), executions(), '*']));
      expect(sorted(states.get('*')!), family).toEqual(sorted(FLOW_TASK_TOKEN_ACTIONS));
      expect(sorted(states.get(stateMachines())!), family).toEqual(
        sorted(['states:CreateStateMachine', 'states:DeleteStateMachine', 'states:DescribeStateMachine', 'states:StartExecution', 'states:TagResource']),
      );
      expect(sorted(states.get(executions())!), family).toEqual(sorted(['states:StopExecution', 'states:DescribeExecution']));
      expect(sorted(states.get(stateMachines())!)).toEqual(sorted(FLOW_EXECUTION_ACTIONS.manage.stateMachines));
      // Passing the schedule role (to EventBridge Scheduler) is asserted with the flow schedules.
      const statesIam = iam.filter((s) => JSON.stringify(s.Resource) !== JSON.stringify(scheduleRoleArn()));
      expect(statesIam, family).toHaveLength(1);
      expect(statesIam[0]).toMatchObject({
        Effect: 'Allow',
        Action: 'iam:PassRole',
        Resource: roleArn(),
        Condition: { StringEquals: { 'iam:PassedToService': 'states.amazonaws.com' } },
      });
    }
  });

  it('lets the flow workers only describe the prefixed state machines and executions, and pass no role', () => {
    expect(sorted(FLOW_WORKERS)).toEqual(sorted([...TASK_WORKER, ...SETTLE_WORKERS]));
    for (const worker of FLOW_WORKERS) {
      const { states, iam } = flowStatements(stateless.workers[worker]);
      expect(sorted(states.keys()), worker).toEqual(sorted([stateMachines(), executions(), '*']));
      // Task tokens: the task worker ends a wait whose upload already ended.
      expect(sorted(states.get('*')!), worker).toEqual(sorted(FLOW_TASK_TOKEN_ACTIONS));
      expect(sorted(states.get(stateMachines())!), worker).toEqual(['states:DescribeStateMachine']);
      expect(sorted(states.get(executions())!), worker).toEqual(['states:DescribeExecution']);
      expect(iam, worker).toEqual([]);
    }
  });

  it('gives no other function any Step Functions or IAM permission', () => {
    for (const { label, family, fn, grants } of DECLARED) {
      const isFlow = family ? Boolean((FAMILIES[family] as FamilySpec).grants.flowExecutions) : Boolean(grants.flowExecutions) || FLOW_WORKERS.some((w) => stateless.workers[w] === fn());
      if (isFlow) continue;
      const actions = statementsOf(logicalId(fn())).flatMap((st) => asArray(st.Action));
      expect(actions.filter((a) => a.startsWith('states:') || a.startsWith('iam:')), label).toEqual([]);
    }
  });

  it('sets the flows env exactly on the functions that run flows (the task worker is not told its own ARN)', () => {
    for (const { label, fn, grants } of DECLARED) {
      const vars = varsOf(fn());
      // The flows family, and the schedule-start worker (it starts runs too).
      const manager = Boolean(grants.flowExecutions);
      const worker = FLOW_WORKERS.find((w) => stateless.workers[w] === fn());
      if (!manager && !worker) {
        for (const name of [ENV.flowStateMachinePrefix, ENV.flowStateMachineRoleArn, ENV.flowTaskWorkerArn]) {
          expect(vars, `${label} must not see ${name}`).not.toHaveProperty(name);
        }
        continue;
      }
      expect(vars[ENV.flowStateMachinePrefix], label).toBe(stateless.flowStateMachinePrefix);
      expect(vars[ENV.flowStateMachineRoleArn], label).toEqual(roleArn());
      if (worker === 'flowTaskWorker') expect(vars, label).not.toHaveProperty(ENV.flowTaskWorkerArn);
      else expect(vars[ENV.flowTaskWorkerArn], label).toEqual(fnArn('flowTaskWorker'));
    }
  });

  it("sends our state machines' final execution statuses, and only those, to the settle worker", () => {
    // The flow rule, the two flow hook rules (see flow hooks), nothing else.
    const rules = ofType('AWS::Events::Rule');
    expect(sorted(rules.map(([id]) => id))).toEqual(
      sorted([stateless.flowExecutionEndedRule, stateless.assetStoredRule, stateless.uploadEventsRule].map(logicalId)),
    );
    const [ruleId, rule] = rules.find(([id]) => id === logicalId(stateless.flowExecutionEndedRule))!;
    expect(rule.Properties.State).toBe('ENABLED');
    expect(rule.Properties.EventBusName).toBeUndefined(); // the default bus, where Step Functions sends them
    const pattern = rule.Properties.EventPattern;
    expect(Object.keys(pattern).sort()).toEqual(['detail', 'detail-type', 'source']);
    expect(pattern.source).toEqual(['aws.states']);
    expect(pattern['detail-type']).toEqual(['Step Functions Execution Status Change']);
    expect(Object.keys(pattern.detail).sort()).toEqual(['stateMachineArn', 'status']);
    expect(sorted(pattern.detail.status)).toEqual(sorted(['SUCCEEDED', 'FAILED', 'TIMED_OUT', 'ABORTED']));
    expect(sorted(FINAL_EXECUTION_STATUSES)).toEqual(sorted(pattern.detail.status));
    expect(pattern.detail.stateMachineArn).toHaveLength(1);
    expect(Object.keys(pattern.detail.stateMachineArn[0])).toEqual(['prefix']);
    expect(render(pattern.detail.stateMachineArn[0].prefix)).toBe(ARN('stateMachine', `${stateless.flowStateMachinePrefix}-`));

    const targets = rule.Properties.Targets as any[];
    expect(targets.map((t) => t.Arn)).toEqual(SETTLE_WORKERS.map(fnArn));
    for (const t of targets) {
      expect(t.Input ?? t.InputPath ?? t.InputTransformer).toBeUndefined(); // the whole event
      expect(t.RetryPolicy.MaximumRetryAttempts).toBeGreaterThan(0);
    }
    for (const worker of SETTLE_WORKERS) {
      slTemplate.hasResourceProperties('AWS::Lambda::Permission', {
        Action: 'lambda:InvokeFunction',
        Principal: 'events.amazonaws.com',
        FunctionName: fnArn(worker),
        SourceArn: { 'Fn::GetAtt': [ruleId, 'Arn'] },
      });
    }
    // Nothing but the rule may invoke the settle worker, and no resource policy lets anyone invoke the task worker.
    const permissionsOn = (w: Worker) =>
      ofType('AWS::Lambda::Permission').filter(([, p]) => JSON.stringify(p.Properties.FunctionName).includes(logicalId(stateless.workers[w])));
    for (const worker of SETTLE_WORKERS) expect(permissionsOn(worker)).toHaveLength(1);
    for (const worker of TASK_WORKER) expect(permissionsOn(worker)).toEqual([]);
  });

  describe('flow schedules', () => {
    const SCHEDULE_START = WORKER_NAMES.filter((w) => spec(w).invokedByService === 'flowSchedules');
    const group = () => `${stateless.flowStateMachinePrefix}-schedules`;
    const SCHEDULER_ARN = (resource: string, name: string) => `arn:{AWS::Partition}:scheduler:{AWS::Region}:{AWS::AccountId}:${resource}/${name}`;
    const schedules = () => SCHEDULER_ARN('schedule', `${group()}/${FLOW_SCHEDULE_NAME_PREFIX}-*`);
    /** `scheduler:` actions by resource (rendered), and the iam:PassRole statements of the schedule role. */
    const scheduleStatements = (fn: AppFunction) => {
      const statements = statementsOf(logicalId(fn));
      const actions = new Map<string, Set<string>>();
      for (const st of statements.filter((x) => asArray(x.Action).some((a) => a.startsWith('scheduler:')))) {
        expect(asArray(st.Action).every((a) => a.startsWith('scheduler:')), 'scheduler actions are not mixed with others').toBe(true);
        for (const r of asArray(st.Resource)) actions.set(render(r), new Set([...(actions.get(render(r)) ?? []), ...asArray(st.Action)]));
      }
      const passRole = statements.filter((x) => asArray(x.Action).includes('iam:PassRole') && JSON.stringify(x.Resource) === JSON.stringify(scheduleRoleArn()));
      return { actions, passRole: passRole as (Statement & { Condition?: unknown })[] };
    };
    const scheduleGrant = (d: DeclaredFunction) => d.grants.flowSchedules;

    it('declares one schedule-start worker, invoked by EventBridge Scheduler, that starts runs and only removes schedules', () => {
      expect(SCHEDULE_START).toEqual(['flowScheduleStart']);
      expect(WORKERS.flowScheduleStart).toMatchObject({
        handler: 'flow-schedule-start',
        grants: { table: 'RW', flowExecutions: true, flowSchedules: 'remove' },
        invokedBy: [],
        invokedByService: 'flowSchedules',
      });
      expect(spec('flowScheduleStart').flows).toBeUndefined();
      expect(FAMILIES.flows.grants.flowSchedules).toBe('manage');
      // Removing a user removes their schedules.
      expect(FAMILIES.accounts.grants.flowSchedules).toBe('remove');
    });

    it('has one schedule group, named after the flow prefix', () => {
      const groups = ofType('AWS::Scheduler::ScheduleGroup');
      expect(groups).toHaveLength(1);
      expect(groups[0]![0]).toBe(logicalId(stateless.flowScheduleGroup));
      expect(groups[0]![1].Properties.Name).toBe(group());
      expect(group().length).toBeLessThanOrEqual(64);
      // Schedule names (`<prefix>-<24-character id>`) fit EventBridge Scheduler's 64 characters.
      expect(`${FLOW_SCHEDULE_NAME_PREFIX}-${'0'.repeat(24)}`.length).toBeLessThanOrEqual(64);
      // The schedules themselves are made at run time, not by the stack.
      expect(ofType('AWS::Scheduler::Schedule')).toEqual([]);
    });

    it('has a schedule role only EventBridge Scheduler (for our group) assumes, allowed only to invoke the schedule-start worker', () => {
      const role = slResources[logicalId(stateless.flowScheduleRole)]!;
      expect(role.Type).toBe('AWS::IAM::Role');
      const trust = role.Properties.AssumeRolePolicyDocument.Statement as any[];
      expect(trust).toHaveLength(1);
      expect(trust[0]).toMatchObject({ Action: 'sts:AssumeRole', Effect: 'Allow', Principal: { Service: 'scheduler.amazonaws.com' } });
      expect(trust[0].Condition.StringEquals).toEqual({ 'aws:SourceAccount': { Ref: 'AWS::AccountId' } });
      expect(render(trust[0].Condition.ArnLike['aws:SourceArn'])).toBe(SCHEDULER_ARN('schedule-group', group()));
      expect(role.Properties.ManagedPolicyArns).toBeUndefined();
      expect(role.Properties.Policies).toBeUndefined();
      const roleId = logicalId(stateless.flowScheduleRole);
      const statements = ofType('AWS::IAM::Policy')
        .filter(([, p]) => asArray(p.Properties.Roles).some((r: any) => r.Ref === roleId))
        .flatMap(([, p]) => p.Properties.PolicyDocument.Statement as Statement[]);
      expect(statements.length).toBeGreaterThan(0);
      const targetId = logicalId(stateless.workers.flowScheduleStart);
      for (const st of statements) {
        expect(st.Effect).toBe('Allow');
        expect(asArray(st.Action)).toEqual(['lambda:InvokeFunction']);
        for (const r of asArray(st.Resource)) expect(JSON.stringify(r)).toContain(targetId);
      }
      // No resource policy: the role's own permission is what lets EventBridge Scheduler invoke it.
      const permissions = ofType('AWS::Lambda::Permission').filter(([, p]) => JSON.stringify(p.Properties.FunctionName).includes(targetId));
      expect(permissions).toEqual([]);
    });

    it("lets 'manage' functions create, change and delete only the group's flow schedules and pass only the schedule role to EventBridge Scheduler", () => {
      const managers = DECLARED.filter((d) => scheduleGrant(d) === 'manage');
      expect(managers.map((d) => d.label)).toEqual(['family flows']);
      for (const d of managers) {
        const { actions, passRole } = scheduleStatements(d.fn());
        expect([...actions.keys()], d.label).toEqual([schedules()]);
        expect(sorted(actions.get(schedules())!), d.label).toEqual(
          sorted(['scheduler:CreateSchedule', 'scheduler:UpdateSchedule', 'scheduler:DeleteSchedule', 'scheduler:GetSchedule']),
        );
        expect(sorted(actions.get(schedules())!)).toEqual(sorted(FLOW_SCHEDULE_ACTIONS.manage));
        expect(passRole, d.label).toHaveLength(1);
        expect(passRole[0]).toMatchObject({ Effect: 'Allow', Action: 'iam:PassRole', Condition: { StringEquals: { 'iam:PassedToService': 'scheduler.amazonaws.com' } } });
        const vars = varsOf(d.fn());
        expect(vars[ENV.flowScheduleGroup], d.label).toBe(group());
        expect(vars[ENV.flowScheduleRoleArn], d.label).toEqual(scheduleRoleArn());
        expect(vars[ENV.flowScheduleStartArn], d.label).toEqual(fnArn('flowScheduleStart'));
      }
    });

    it("lets 'remove' functions only delete (and read) the group's flow schedules: no role to pass, no target", () => {
      const removers = DECLARED.filter((d) => scheduleGrant(d) === 'remove');
      expect(sorted(removers.map((d) => d.label))).toEqual(['family accounts', 'worker flowScheduleStart']);
      for (const d of removers) {
        const { actions, passRole } = scheduleStatements(d.fn());
        expect([...actions.keys()], d.label).toEqual([schedules()]);
        expect(sorted(actions.get(schedules())!), d.label).toEqual(sorted(['scheduler:DeleteSchedule', 'scheduler:GetSchedule']));
        expect(passRole, d.label).toEqual([]);
        const vars = varsOf(d.fn());
        expect(vars[ENV.flowScheduleGroup], d.label).toBe(group());
        expect(vars, d.label).not.toHaveProperty(ENV.flowScheduleRoleArn);
        expect(vars, d.label).not.toHaveProperty(ENV.flowScheduleStartArn);
      }
    });

    it('gives no other function any scheduler permission or schedule env', () => {
      for (const d of DECLARED.filter((x) => !scheduleGrant(x))) {
        const { actions, passRole } = scheduleStatements(d.fn());
        expect(actions.size, d.label).toBe(0);
        expect(passRole, d.label).toEqual([]);
        for (const name of [ENV.flowScheduleGroup, ENV.flowScheduleRoleArn, ENV.flowScheduleStartArn]) expect(varsOf(d.fn()), `${d.label} must not see ${name}`).not.toHaveProperty(name);
      }
    });

    it('lets the schedule-start worker start runs as the flows family does: manage the prefixed state machines, pass only their role to Step Functions', () => {
      for (const worker of SCHEDULE_START) {
        const { states, iam } = flowStatements(stateless.workers[worker]);
        expect(sorted(states.keys()), worker).toEqual(sorted([stateMachines(), executions(), '*']));
        expect(sorted(states.get(stateMachines())!), worker).toEqual(sorted(FLOW_EXECUTION_ACTIONS.manage.stateMachines));
        expect(sorted(states.get(executions())!), worker).toEqual(sorted(FLOW_EXECUTION_ACTIONS.manage.executions));
        expect(iam, worker).toHaveLength(1);
        expect(iam[0]).toMatchObject({ Action: 'iam:PassRole', Resource: roleArn(), Condition: { StringEquals: { 'iam:PassedToService': 'states.amazonaws.com' } } });
        const vars = varsOf(stateless.workers[worker]);
        expect(vars[ENV.flowTaskWorkerArn], worker).toEqual(fnArn('flowTaskWorker'));
      }
    });
  });
});

describe('stateless stack: flow hooks, upload events and email', () => {
  const spec = (w: Worker): WorkerSpec => WORKERS[w];
  const HOOK_WORKERS = WORKER_NAMES.filter((w) => spec(w).invokedByService === 'uploadEvents');
  const fnArn = (w: Worker) => ({ 'Fn::GetAtt': [logicalId(stateless.workers[w]), 'Arn'] });
  const varsOf = (fn: AppFunction): Record<string, unknown> => slResources[logicalId(fn)]!.Properties.Environment?.Variables ?? {};
  const sorted = (xs: Iterable<string>) => [...xs].sort();
  const ruleOf = (rule: IConstruct) => slResources[logicalId(rule)]!;
  const statementsWith = (fn: AppFunction, service: string) =>
    statementsOf(logicalId(fn)).filter((st) => asArray(st.Action).some((a) => a.startsWith(`${service}:`))) as (Statement & { Condition?: unknown })[];

  it('declares one hook dispatcher: invoked by the upload event rules, starting runs like the flows family', () => {
    expect(HOOK_WORKERS).toEqual(['flowHookDispatcher']);
    expect(WORKERS.flowHookDispatcher).toMatchObject({
      handler: 'flow-hook-dispatcher',
      grants: { table: 'RW', dataBucket: 'R', flowExecutions: true, mail: true },
      invokedBy: [],
      invokedByService: 'uploadEvents',
    });
    expect(spec('flowHookDispatcher').flows).toBeUndefined();
    // Among the bundles the bundle tests load on plain Node.
    expect(DECLARED.map((d) => d.fn().entryName)).toContain('flow-hook-dispatcher');
  });

  it('sends asset files stored in the data bucket (S3 Object Created on the asset keys) to the dispatcher, with retries', () => {
    const rule = ruleOf(stateless.assetStoredRule);
    expect(rule.Properties.State).toBe('ENABLED');
    expect(rule.Properties.EventBusName).toBeUndefined(); // the default bus, where S3 sends its events
    const pattern = rule.Properties.EventPattern;
    expect(Object.keys(pattern).sort()).toEqual(['detail', 'detail-type', 'source']);
    expect(pattern.source).toEqual(['aws.s3']);
    expect(pattern['detail-type']).toEqual(['Object Created']);
    expect(Object.keys(pattern.detail).sort()).toEqual(['bucket', 'object']);
    expect(pattern.detail.bucket.name).toHaveLength(1);
    expect(JSON.stringify(pattern.detail.bucket.name[0])).toContain(logicalId(stateful.dataBucket));
    expect(pattern.detail.object).toEqual({ key: [{ wildcard: ASSET_KEY_WILDCARD }] });
    expect(ASSET_KEY_WILDCARD).toBe('datasets/*/assets/*');
    // The key asset-service.ts writes asset files under.
    expect(readFileSync(join(REPO_ROOT, 'functions', 'domain', 'asset-service.ts'), 'utf8')).toContain('`datasets/${datasetId}/assets/${identifier}/${versionId}`');
    const targets = rule.Properties.Targets as any[];
    expect(targets.map((t) => t.Arn)).toEqual(HOOK_WORKERS.map(fnArn));
    for (const t of targets) {
      expect(t.Input ?? t.InputPath ?? t.InputTransformer).toBeUndefined(); // the whole event
      expect(t.RetryPolicy.MaximumRetryAttempts).toBeGreaterThan(0);
    }
  });

  it('sends our upload events (Import started, Import finished) to the dispatcher, with retries', () => {
    const rule = ruleOf(stateless.uploadEventsRule);
    expect(rule.Properties.State).toBe('ENABLED');
    expect(rule.Properties.EventBusName).toBeUndefined(); // the default bus, where EventBridgeUploadEvents puts them
    expect(rule.Properties.EventPattern).toEqual({ source: [UPLOAD_EVENT_SOURCE], 'detail-type': Object.values(UPLOAD_EVENT_TYPES) });
    expect(UPLOAD_EVENT_SOURCE).toBe('linked-data-platform.uploads');
    expect(sorted(Object.values(UPLOAD_EVENT_TYPES))).toEqual(sorted(['Import started', 'Import finished']));
    const targets = rule.Properties.Targets as any[];
    expect(targets.map((t) => t.Arn)).toEqual(HOOK_WORKERS.map(fnArn));
    for (const t of targets) {
      expect(t.Input ?? t.InputPath ?? t.InputTransformer).toBeUndefined();
      expect(t.RetryPolicy.MaximumRetryAttempts).toBeGreaterThan(0);
    }
  });

  it('lets exactly the two rules invoke the dispatcher', () => {
    for (const worker of HOOK_WORKERS) {
      const permissions = ofType('AWS::Lambda::Permission').filter(([, p]) => JSON.stringify(p.Properties.FunctionName).includes(logicalId(stateless.workers[worker])));
      expect(permissions.map(([, p]) => p.Properties.Principal)).toEqual(['events.amazonaws.com', 'events.amazonaws.com']);
      expect(sorted(permissions.map(([, p]) => p.Properties.SourceArn['Fn::GetAtt'][0]))).toEqual(sorted([stateless.assetStoredRule, stateless.uploadEventsRule].map(logicalId)));
      for (const [, p] of permissions) expect(p.Properties).toMatchObject({ Action: 'lambda:InvokeFunction', FunctionName: fnArn(worker) });
    }
  });

  it("gives the dispatcher the flows family's run-starting access: table RW, data bucket R, manage executions, pass the state machine role", () => {
    const fn = stateless.workers.flowHookDispatcher;
    const statements = statementsOf(logicalId(fn));
    expect(actionsOn(statements, logicalId(stateful.table))).toEqual(expect.arrayContaining(['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:Query']));
    const onData = actionsOn(statements, logicalId(stateful.dataBucket));
    expect(onData).toContain('s3:GetObject*');
    expect(onData).not.toContain('s3:PutObject');
    for (const bucket of [stateful.uploadsBucket, stateful.artifactsBucket]) expect(actionsOn(statements, logicalId(bucket))).toEqual([]);
    const states = statementsWith(fn, 'states').flatMap((st) => asArray(st.Action));
    // It ends data upload hooks' task-token waits too.
    expect(sorted(new Set(states))).toEqual(sorted([...FLOW_EXECUTION_ACTIONS.manage.stateMachines, ...FLOW_EXECUTION_ACTIONS.manage.executions, ...FLOW_TASK_TOKEN_ACTIONS]));
    const iam = statementsWith(fn, 'iam');
    expect(iam).toHaveLength(1);
    expect(iam[0]).toMatchObject({
      Action: 'iam:PassRole',
      Resource: { 'Fn::GetAtt': [logicalId(stateless.flowStateMachineRole), 'Arn'] },
      Condition: { StringEquals: { 'iam:PassedToService': 'states.amazonaws.com' } },
    });
    for (const service of ['scheduler', 'lambda', 'events']) expect(statementsWith(fn, service), service).toEqual([]);
    const vars = varsOf(fn);
    expect(vars[ENV.flowStateMachinePrefix]).toBe(stateless.flowStateMachinePrefix);
    expect(vars[ENV.flowTaskWorkerArn]).toEqual(fnArn('flowTaskWorker'));
    expect(vars[ENV.mailFrom]).toBe(DEFAULT_MAIL_FROM);
  });

  it('lets exactly the imports family and the import worker put events, only on the default bus and only with the upload source', () => {
    const putters = DECLARED.filter((d) => d.grants.uploadEvents);
    expect(sorted(putters.map((d) => d.label))).toEqual(['family imports', 'worker importWorker']);
    for (const d of DECLARED) {
      const events = statementsWith(d.fn(), 'events');
      if (!d.grants.uploadEvents) {
        expect(events, d.label).toEqual([]);
        continue;
      }
      expect(events, d.label).toHaveLength(1);
      expect(events[0]).toMatchObject({ Effect: 'Allow', Action: 'events:PutEvents', Condition: { StringEquals: { 'events:source': UPLOAD_EVENT_SOURCE } } });
      expect(render(events[0]!.Resource)).toBe('arn:{AWS::Partition}:events:{AWS::Region}:{AWS::AccountId}:event-bus/default');
    }
  });

  it('lets the functions that settle or start runs, and the task worker, send email from MAIL_FROM only, and tells them MAIL_FROM', () => {
    const senders = DECLARED.filter((d) => d.grants.mail);
    // Settling sends failure emails: the flows family (abort), the settle worker, and the run
    // starters (a run that fails to start settles failed); the task worker has the Send email task.
    expect(sorted(senders.map((d) => d.label))).toEqual(
      sorted(['family flows', 'worker flowSettle', 'worker flowTaskWorker', 'worker flowScheduleStart', 'worker flowHookDispatcher']),
    );
    const identity = (name: string) => `arn:{AWS::Partition}:ses:{AWS::Region}:{AWS::AccountId}:identity/${name}`;
    expect(stateless.mailFrom).toBe(DEFAULT_MAIL_FROM);
    for (const d of DECLARED) {
      const ses = statementsWith(d.fn(), 'ses');
      const vars = varsOf(d.fn());
      if (!d.grants.mail) {
        expect(ses, d.label).toEqual([]);
        expect(vars, `${d.label} must not see ${ENV.mailFrom}`).not.toHaveProperty(ENV.mailFrom);
        continue;
      }
      expect(vars[ENV.mailFrom], d.label).toBe(DEFAULT_MAIL_FROM);
      expect(ses, d.label).toHaveLength(1);
      expect(ses[0]).toMatchObject({ Effect: 'Allow', Action: 'ses:SendEmail', Condition: { StringEquals: { 'ses:FromAddress': DEFAULT_MAIL_FROM } } });
      expect(sorted(asArray(ses[0]!.Resource).map(render)), d.label).toEqual(sorted([identity('example.org'), identity(DEFAULT_MAIL_FROM)]));
    }
  });

  it("scopes SES to the stack's mailFrom, and refuses anything but a bare address", () => {
    // No bundling: only the policies and environment are looked at.
    const app = newApp({ 'aws:cdk:bundling-stacks': [] });
    const sf = new StatefulStack(app, 'MailSf');
    const sl = new StatelessStack(app, 'MailSl', { table: sf.table, dataBucket: sf.dataBucket, uploadsBucket: sf.uploadsBucket, artifactsBucket: sf.artifactsBucket, mailFrom: 'flows@mail.example.com' });
    const resources = Template.fromStack(sl).toJSON().Resources as Record<string, Resource>;
    const fn = sl.workers.flowSettle;
    expect(resources[logicalId(fn)]!.Properties.Environment.Variables[ENV.mailFrom]).toBe('flows@mail.example.com');
    const roleId = logicalId(fn.role!);
    const ses = Object.values(resources)
      .filter((r) => r.Type === 'AWS::IAM::Policy' && asArray(r.Properties.Roles).some((x: any) => x.Ref === roleId))
      .flatMap((r) => r.Properties.PolicyDocument.Statement as (Statement & { Condition?: unknown })[])
      .filter((st) => asArray(st.Action).includes('ses:SendEmail'));
    expect(ses).toHaveLength(1);
    expect(ses[0]!.Condition).toEqual({ StringEquals: { 'ses:FromAddress': 'flows@mail.example.com' } });
    expect(sorted(asArray(ses[0]!.Resource).map(render))).toEqual(
      sorted(['mail.example.com', 'flows@mail.example.com'].map((n) => `arn:{AWS::Partition}:ses:{AWS::Region}:{AWS::AccountId}:identity/${n}`)),
    );
    for (const bad of ['Flows <flows@mail.example.com>', 'flows', 'flows@localhost', 'a b@example.org']) {
      expect(() => sesIdentityArns(new Stack(newApp(), 'Bad'), bad), bad).toThrow(/bare email address/);
    }
  });
});

describe('stateless stack: HTTP API', () => {
  it('creates one route per ROUTES entry, each integrated with its family function', () => {
    const routes = ofType('AWS::ApiGatewayV2::Route');
    expect(routes).toHaveLength(ROUTES.length);
    expect(new Set(ROUTES.map(routeKey)).size, 'route keys are unique').toBe(ROUTES.length);
    expect(new Set(routes.map(([, r]) => r.Properties.RouteKey))).toEqual(new Set(ROUTES.map(routeKey)));
    const apiId = logicalId(stateless.api);
    for (const route of ROUTES) {
      const matches = routes.filter(([, r]) => r.Properties.RouteKey === routeKey(route));
      expect(matches, routeKey(route)).toHaveLength(1);
      const props = matches[0]![1].Properties;
      expect(props.ApiId).toEqual({ Ref: apiId });
      // Target is `integrations/<IntegrationId>`.
      const [, [prefix, ref]] = props.Target['Fn::Join'];
      expect(prefix).toBe('integrations/');
      const integration = slResources[ref.Ref]!;
      expect(integration.Type).toBe('AWS::ApiGatewayV2::Integration');
      expect(integration.Properties).toMatchObject({
        IntegrationType: 'AWS_PROXY',
        PayloadFormatVersion: '2.0',
        IntegrationUri: { 'Fn::GetAtt': [logicalId(stateless.functions[route.family]), 'Arn'] },
      });
    }
  });

  it('shares one integration per family', () => {
    expect(ofType('AWS::ApiGatewayV2::Integration')).toHaveLength(new Set(ROUTES.map((r) => r.family)).size);
  });

  it('lets API Gateway invoke each routed function, and only from this API', () => {
    for (const family of new Set(ROUTES.map((r) => r.family))) {
      slTemplate.hasResourceProperties('AWS::Lambda::Permission', {
        Action: 'lambda:InvokeFunction',
        Principal: 'apigateway.amazonaws.com',
        FunctionName: { 'Fn::GetAtt': [logicalId(stateless.functions[family]), 'Arn'] },
        SourceArn: Match.anyValue(),
      });
    }
    // The only other resource-policy grants: EventBridge rules invoking the flow settle worker and
    // the flow hook dispatcher (see flows and flow hooks).
    const [apiPermissions, others] = [
      ofType('AWS::Lambda::Permission').filter(([, p]) => p.Properties.Principal === 'apigateway.amazonaws.com'),
      ofType('AWS::Lambda::Permission').filter(([, p]) => p.Properties.Principal !== 'apigateway.amazonaws.com'),
    ];
    for (const [, p] of apiPermissions) {
      expect(JSON.stringify(p.Properties.SourceArn)).toContain(logicalId(stateless.api));
    }
    for (const [, p] of others) {
      expect(p.Properties.Principal).toBe('events.amazonaws.com');
      const rules = [stateless.flowExecutionEndedRule, stateless.assetStoredRule, stateless.uploadEventsRule];
      expect(rules.map((r) => ({ 'Fn::GetAtt': [logicalId(r), 'Arn'] }))).toContainEqual(p.Properties.SourceArn);
    }
  });

  it('has a $default stage with access logs, no CORS, and outputs the URL', () => {
    slTemplate.hasResourceProperties('AWS::ApiGatewayV2::Api', {
      ProtocolType: 'HTTP',
      CorsConfiguration: Match.absent(),
    });
    slTemplate.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
      StageName: '$default',
      AutoDeploy: true,
      AccessLogSettings: { DestinationArn: Match.anyValue(), Format: Match.stringLikeRegexp('requestId') },
    });
    slTemplate.hasOutput('ApiUrl', {});
  });
});

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

  it('has three private, encrypted, TLS-only buckets', () => {
    sfTemplate.resourceCountIs('AWS::S3::Bucket', 3);
    for (const bucket of [stateful.dataBucket, stateful.uploadsBucket, stateful.artifactsBucket]) {
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

describe('bind helpers', () => {
  // Covers the 'R' bucket path that FAMILIES may not use yet; a plain function needs no bundling.
  it("grants read-only access for 'R' and read-write with delete for 'RW'", () => {
    const stack = new Stack(newApp(), 'BindTest');
    const table = new TableV2(stack, 'T', { partitionKey: { name: 'pk', type: AttributeType.STRING } });
    const bucket = new Bucket(stack, 'B');
    const make = (id: string) =>
      new LambdaFunction(stack, id, { runtime: Runtime.NODEJS_22_X, handler: 'index.handler', code: Code.fromInline('exports.handler = async () => {};') });
    const reader = make('Reader');
    const writer = make('Writer');
    bindTable(reader, table, 'R');
    bindBucket(reader, bucket, ENV.dataBucketName, 'R');
    bindTable(writer, table, 'RW');
    bindBucket(writer, bucket, ENV.dataBucketName, 'RW');

    const template = Template.fromStack(stack);
    const resources = template.toJSON().Resources as Record<string, Resource>;
    const actionsOf = (fn: LambdaFunction) => {
      const roleId = logicalId(fn.role!);
      return Object.values(resources)
        .filter((r) => r.Type === 'AWS::IAM::Policy' && r.Properties.Roles.some((x: any) => x.Ref === roleId))
        .flatMap((r) => (r.Properties.PolicyDocument.Statement as Statement[]).flatMap((s) => asArray(s.Action)));
    };
    const read = actionsOf(reader);
    expect(read).toEqual(expect.arrayContaining(['dynamodb:GetItem', 's3:GetObject*']));
    for (const a of ['dynamodb:PutItem', 'dynamodb:DeleteItem', 's3:PutObject', 's3:DeleteObject*']) expect(read).not.toContain(a);
    expect(actionsOf(writer)).toEqual(expect.arrayContaining(['dynamodb:PutItem', 's3:PutObject', 's3:DeleteObject*']));

    for (const fn of [reader, writer]) {
      template.hasResourceProperties('AWS::Lambda::Function', {
        Role: { 'Fn::GetAtt': [logicalId(fn.role!), 'Arn'] },
        Environment: { Variables: { [ENV.tableName]: Match.anyValue(), [ENV.dataBucketName]: Match.anyValue() } },
      });
    }
  });
});
