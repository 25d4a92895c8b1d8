/**
 * CDK: the stateless stack's functions (one per route family and per worker, sized, logged and
 * granted from the tables), their esbuild bundles loaded on plain Node as Lambda would, and the
 * bind helpers. The only infra file that bundles (the set-up is in test/support/stacks.ts).
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { basename, dirname, join, sep } from 'node:path';
import { promisify } from 'node:util';
import { Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { Code, Function as LambdaFunction, Runtime } from 'aws-cdk-lib/aws-lambda';
import { Bucket } from 'aws-cdk-lib/aws-s3';
import { TableV2, AttributeType } from 'aws-cdk-lib/aws-dynamodb';
import { describe, expect, it } from 'vitest';
import { ENV } from '../../functions/env-names.js';
import { FAMILIES, WORKERS, type BucketAccess } from '../../functions/http/route-table.js';
import {
  ENGINE_WORKER,
  ENGINE_WORKER_MODULES,
  BUCKET_ACTIONS,
  FLOW_TASK_TOKEN_ACTIONS,
  TABLE_ACTIONS,
  INSTALLED_MODULES,
  SPARQL_PARSE_WORKER,
  SPARQL_PARSE_WORKER_MODULES,
  RDF_PARSE_WORKER,
  bindBucket,
  bindTable,
} from '../../lib/constructs/app-function.js';
import type { Worker } from '../../lib/stateless-stack.js';
import {
  REPO_ROOT,
  FAMILY_NAMES,
  WORKER_NAMES,
  DECLARED,
  BUCKET_GRANTS,
  stateful,
  stateless,
  slResources,
  newApp,
  outdirs,
  logicalId,
  asArray,
  ofType,
  assetDir,
  statementsOf,
  actionsOn,
  synthesizeStacks,
  type BucketGrant,
  type Resource,
  type Statement,
} from '../support/stacks.js';

synthesizeStacks({ bundle: true });

describe('stateless stack: functions', () => {
  it('has exactly one function per family and per worker: nodejs24.x, arm64, traced, sized from the tables', () => {
    expect(ofType('AWS::Lambda::Function')).toHaveLength(FAMILY_NAMES.length + WORKER_NAMES.length);
    const ids = new Set(DECLARED.map((d) => logicalId(d.fn())));
    expect(ids.size).toBe(DECLARED.length);
    for (const d of DECLARED) {
      const fn = slResources[logicalId(d.fn())]!;
      expect(fn.Type, d.label).toBe('AWS::Lambda::Function');
      expect(fn.Properties, d.label).toMatchObject({
        Runtime: 'nodejs24.x',
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
      const releases = (grants.flowExecutions ?? []).includes('release');
      const statements = statementsOf(logicalId(fn()));
      const all = statements.flatMap((s) => asArray(s.Action));

      // Nothing is granted on "*" except X-Ray tracing, to functions that release task-token
      // waits the two task-token actions (which take no resource scoping), and to functions in
      // the VPC (serviceHosts 'query') their network interfaces (Lambda's VPC access).
      for (const s of statements.filter((st) => asArray(st.Resource).includes('*'))) {
        for (const action of asArray(s.Action)) {
          if ((FLOW_TASK_TOKEN_ACTIONS as readonly string[]).includes(action)) expect(releases, family).toBe(true);
          else if (/^ec2:\w+NetworkInterfaces?$|^ec2:(Assign|Unassign)PrivateIpAddresses$/.test(action)) expect(grants.serviceHosts, family).toBe('query');
          else expect(action, family).toMatch(/^xray:/);
        }
      }

      const onTable = [...new Set(actionsOn(statements, tableId))].sort();
      if (grants.table) {
        expect(onTable, family).toEqual([...TABLE_ACTIONS[grants.table]].sort());
      } else {
        expect(all.filter((a) => a.startsWith('dynamodb:'))).toEqual([]);
      }
      // DynamoDB actions only ever target the table.
      const dynamoStatements = statements.filter((s) => asArray(s.Action).some((a) => a.startsWith('dynamodb:')));
      for (const s of dynamoStatements) expect(JSON.stringify(s.Resource)).toContain(tableId);

      for (const grant of Object.keys(BUCKET_GRANTS) as BucketGrant[]) {
        const onBucket = [...new Set(actionsOn(statements, logicalId(stateful[grant])))].sort();
        const access: BucketAccess | undefined = grants[grant];
        if (access) {
          // tusUploads: the parts of the upload host's multipart uploads (tus/*) may be listed too.
          const tus = grant === 'uploadsBucket' && grants.tusUploads ? ['s3:ListMultipartUploadParts'] : [];
          expect(onBucket, `${family} on ${grant}`).toEqual([...BUCKET_ACTIONS[access].objects, ...BUCKET_ACTIONS[access].bucket, ...tus].sort());
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
  // The engine's load protocol: chunks on a port, each counted in a shared counter the worker
  // waits on (Atomics), acknowledged one by one, then done.
  const { port1, port2 } = new MessageChannel();
  const sent = new Int32Array(new SharedArrayBuffer(4));
  const post = (m) => { port1.postMessage(m); Atomics.add(sent, 0, 1); Atomics.notify(sent, 0); };
  port1.on('message', () => post({ done: true }));
  const loaded = new Promise((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
    worker.postMessage({ id: 1, type: 'loadStream', port: port2, sent }, [port2]);
  });
  post({ chunk: '<urn:s> <urn:p> "o" <urn:g> .\\n' });
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
    expect(read).toEqual(expect.arrayContaining(['dynamodb:GetItem', 's3:GetObject', 's3:ListBucket']));
    for (const a of ['dynamodb:PutItem', 'dynamodb:DeleteItem', 's3:PutObject', 's3:DeleteObject']) expect(read).not.toContain(a);
    expect(actionsOf(writer)).toEqual(expect.arrayContaining(['dynamodb:PutItem', 's3:PutObject', 's3:DeleteObject', 's3:AbortMultipartUpload']));
    // Never Scan, stream reads, batch calls or version purges.
    for (const a of [...read, ...actionsOf(writer)]) expect(a).not.toMatch(/Scan|GetRecords|GetShardIterator|DescribeStream|ListStreams|Batch|DeleteObjectVersion|\*/);

    for (const fn of [reader, writer]) {
      template.hasResourceProperties('AWS::Lambda::Function', {
        Role: { 'Fn::GetAtt': [logicalId(fn.role!), 'Arn'] },
        Environment: { Variables: { [ENV.tableName]: Match.anyValue(), [ENV.dataBucketName]: Match.anyValue() } },
      });
    }
  });
});
