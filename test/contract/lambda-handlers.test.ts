/**
 * The Lambda entry modules the stack deploys, invoked with API Gateway (HTTP API v2) events and
 * wired by the AWS composition root from environment variables only, against dynalite speaking
 * the DynamoDB wire protocol.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { ENV } from '../../functions/env-names.js';
import { apiEvent as event, invokeHandler as invoke, lambdaContext as context, useAwsStandIns } from '../support/aws-stand-ins.js';

/**
 * Step Functions has no local stand-in: this server answers the few calls the executor makes and
 * records them, so the tests can check what the platform asked Step Functions to do.
 */
const sfnCalls: { action: string; input: Record<string, unknown> }[] = [];
/** Lambda has no local stand-in either: the same server records asynchronous invocations. */
const lambdaInvokes: { functionName: string; payload: Record<string, unknown> }[] = [];
const ACCOUNT_ARN = 'arn:aws:lambda:eu-west-1:123456789012:function:flow-task-worker';

useAwsStandIns({
  table: 'platform-lambda-test',
  faked: ['SFN', 'LAMBDA', 'EVENTBRIDGE'],
  fake: (req, body, res) => {
    // Lambda's asynchronous Invoke (the import route starting the worker function): recorded.
    const invoked = /^\/2015-03-31\/functions\/([^/]+)\/invocations/.exec(req.url ?? '');
    if (invoked) {
      lambdaInvokes.push({ functionName: decodeURIComponent(invoked[1]!), payload: JSON.parse(body.toString('utf8') || '{}') });
      res.writeHead(202);
      res.end();
      return;
    }
    const action = String(req.headers['x-amz-target'] ?? '').split('.').pop() ?? '';
    const input = JSON.parse(body.toString('utf8') || '{}') as Record<string, unknown>;
    sfnCalls.push({ action, input });
    const machine = `arn:aws:states:eu-west-1:123456789012:stateMachine:${String(input.name ?? '')}`;
    const answer =
      action === 'CreateStateMachine' ? { stateMachineArn: machine, creationDate: Date.now() / 1000 }
      : action === 'StartExecution' ? { executionArn: `${String(input.stateMachineArn).replace(':stateMachine:', ':execution:')}:${String(input.name)}`, startDate: Date.now() / 1000 }
      : {};
    res.writeHead(200, { 'content-type': 'application/x-amz-json-1.0' });
    res.end(JSON.stringify(answer));
  },
  env: {
    [ENV.importWorkerFunctionName]: 'import-worker',
    [ENV.flowStateMachinePrefix]: 'test-flow',
    [ENV.flowStateMachineRoleArn]: 'arn:aws:iam::123456789012:role/flows',
    [ENV.flowTaskWorkerArn]: ACCOUNT_ARN,
    // As the stack sets it on every function: runs started by hooks need it (issue 13).
    [ENV.publicApiUrl]: 'https://api.example.org',
  },
});

describe('Lambda handlers', () => {
  it('info answers with the API URL of the request', async () => {
    const res = await invoke('info', event('GET', '/info'));
    expect(res.statusCode).toBe(200);
    expect(res.json.apiUrl).toBe('https://api.example.org');
  });

  it('a read-only family answers 401, not 500, to a token sent before any token was issued', async () => {
    const res = await invoke('info', event('GET', '/info', { token: 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4IiwianRpIjoieSJ9.c2ln' }));
    expect(res.statusCode).toBe(401);
  });

  it('accounts, auth and datasets work end to end through their own functions', async () => {
    // Seed the administrator the way bin/cli.ts does on a fresh deployment.
    const { awsServices } = await import('../../functions/composition/aws.js');
    const services = await awsServices();
    const { account: admin } = await services.accounts.ensureAdministrator('ops', 'ops-password-123');
    const { token } = await services.auth.issueToken(admin, { description: 'lambda', readOnly: false }, 'https://api.example.org');

    const me = await invoke('auth', event('GET', '/me', { token }));
    expect(me.statusCode).toBe(200);
    expect(me.json.accountName).toBe('ops');

    const created = await invoke('datasets', event('POST', '/datasets/ops', { token, body: { name: 'lambda-data', accessLevel: 'private' } }));
    expect(created.statusCode).toBe(201);
    expect((await invoke('datasets', event('GET', '/datasets/ops/lambda-data'))).statusCode).toBe(404);
    const read = await invoke('datasets', event('GET', '/datasets/ops/lambda-data', { token }));
    expect(read.statusCode).toBe(200);
    expect(read.headers?.['content-type']).toMatch(/^application\/json/);

    const login = await invoke('auth', event('POST', '/login', { body: { accountName: 'ops', password: 'ops-password-123' } }));
    expect(login.statusCode).toBe(200);
    expect(login.cookies?.some((c) => c.startsWith('ldp_session=') && c.includes('Secure'))).toBe(true);
  });

  it('answers a result larger than a Lambda response with a redirect to a short-lived link', async () => {
    const { awsServices } = await import('../../functions/composition/aws.js');
    const services = await awsServices();
    const { account: admin } = await services.accounts.ensureAdministrator('ops', 'ops-password-123');
    const { token } = await services.auth.issueToken(admin, { description: 'spill', readOnly: false }, 'https://api.example.org');
    await invoke('datasets', event('POST', '/datasets/ops', { token, body: { name: 'big-answers', accessLevel: 'public' } }));
    // 100,000 rows of SPARQL JSON (about 15 MB): well over the limit, without any data.
    const digits = '{ (0) (1) (2) (3) (4) (5) (6) (7) (8) (9) }';
    const query = `SELECT ?a ?b ?c ?d ?e (CONCAT("row-", STR(?a), STR(?b), STR(?c), STR(?d), STR(?e)) AS ?label) WHERE { VALUES (?a) ${digits} VALUES (?b) ${digits} VALUES (?c) ${digits} VALUES (?d) ${digits} VALUES (?e) ${digits} }`;
    const res = await invoke('dataset-sparql', event('GET', '/datasets/ops/big-answers/sparql', { query: `query=${encodeURIComponent(query)}` }));
    expect(res.statusCode).toBe(303);
    const location = res.headers!.location as string;
    expect(location).toMatch(/X-Amz-Signature=/);
    const download = await fetch(location);
    expect(download.status).toBe(200);
    const json = JSON.parse(await download.text());
    expect(json.results.bindings).toHaveLength(100_000);
  }, 120_000);

  it('refuses an event routed to the wrong function', async () => {
    const res = await invoke('info', event('GET', '/me'));
    expect(res.statusCode).toBe(404);
  });

  it('the hook dispatcher turns upload events into waiting and aborted hook runs, and ignores other objects', async () => {
    const { awsServices } = await import('../../functions/composition/aws.js');
    const services = await awsServices();
    const { account: admin } = await services.accounts.ensureAdministrator('ops', 'ops-password-123');
    const { token } = await services.auth.issueToken(admin, { description: 'hooks', readOnly: false }, 'https://api.example.org');
    expect((await invoke('flows', event('PATCH', '/admin/flows', { token, body: { flowsEnabled: true } }))).statusCode).toBe(200);
    await invoke('datasets', event('POST', '/datasets/ops', { token, body: { name: 'hooked', accessLevel: 'private' } }));
    const login = await invoke('auth', event('POST', '/login', { body: { accountName: 'ops', password: 'ops-password-123' } }));
    const session = { cookie: login.cookies!.map((c) => c.split(';')[0]).join('; '), 'x-csrf-token': login.json.csrfToken as string };
    const flow = {
      id: 'on-upload',
      name: 'On upload',
      accessLevel: 'Private',
      outputVariables: [{ name: 'g' }],
      tasks: [{ id: 'note', label: 'Note', type: 'setVariables', settings: { values: { g: '?system_uploadedGraphIRI' } } }],
      connections: [],
    };
    expect((await invoke('flows', event('POST', '/flows/blueprints/ops', { headers: session, body: flow }))).statusCode).toBe(201);
    const hook = await invoke('flows', event('POST', '/flows/blueprints/ops/on-upload/hooks', { headers: session, body: { label: 'Uploads', type: 'dataUpload', dataset: { account: 'ops', dataset: 'hooked' } } }));
    expect(hook.statusCode).toBe(201);
    const dataset = await services.platform.store.getDataset(admin.uid, 'hooked');

    const dispatcher = await import('../../functions/handlers/flow-hook-dispatcher.js');
    const worker = await import('../../functions/handlers/flow-task-worker.js');
    const settle = await import('../../functions/handlers/flow-settle.js');
    const uploadEvent = (type: string, detail: object) => ({ version: '0', id: 'e', source: 'linked-data-platform.uploads', 'detail-type': type, account: '123', time: '', region: 'eu-west-1', resources: [], detail });
    const runs = async () => (await invoke('flows', event('GET', '/flows/runs', { token, query: `hookId=${hook.json.id}` }))).json;

    // The upload starts: the hook's first run starts an execution that waits at upload.wait.
    sfnCalls.length = 0;
    await dispatcher.handler(uploadEvent('Import started', { datasetId: dataset!.id, jobId: 'job-1', apiUrl: 'https://api.example.org' }) as never, context);
    const [waiting] = await runs();
    expect(waiting).toMatchObject({ status: 'waiting', startedFrom: { type: 'hook-index-job' } });
    const created = sfnCalls.find((c) => c.action === 'CreateStateMachine')!;
    expect(JSON.parse(String(created.input.definition)).States['upload.wait']).toMatchObject({
      Resource: 'arn:aws:states:::lambda:invoke.waitForTaskToken',
      Parameters: { FunctionName: ACCOUNT_ARN },
    });
    const started = sfnCalls.find((c) => c.action === 'StartExecution')!;
    expect(started.input.name).toBe(waiting.id);
    expect(JSON.parse(String(started.input.input)).run).toMatchObject({ id: waiting.id, waitForUpload: true });

    // Step Functions reaches upload.wait and invokes the task worker with the task token.
    await worker.handler({ kind: 'waitForUpload', runId: waiting.id, taskToken: 'token-1' } as never, context);
    // The upload ends without a graph: the wait is failed with the reason, and no new run starts.
    sfnCalls.length = 0;
    await dispatcher.handler(uploadEvent('Import finished', { datasetId: dataset!.id, jobId: 'job-1', graphs: [], ok: true }) as never, context);
    expect(sfnCalls).toEqual([{ action: 'SendTaskFailure', input: { taskToken: 'token-1', error: 'Flow.aborted', cause: 'The upload added no graph.' } }]);
    // The execution then fails at upload.none, and its status change settles the run.
    await settle.handler({ source: 'aws.states', 'detail-type': 'Step Functions Execution Status Change', detail: { executionArn: 'arn:aws:states:eu-west-1:123456789012:execution:m:x', name: waiting.id, status: 'FAILED', error: 'Flow.aborted', cause: 'The upload added no graph.' } } as never, context);
    const [aborted] = await runs();
    expect(aborted).toMatchObject({ status: 'aborted', error: { message: 'The upload added no graph.' } });

    // A second upload that adds two graphs: the waiting run gets the first (SendTaskSuccess); the
    // second graph starts a run of its own.
    await dispatcher.handler(uploadEvent('Import started', { datasetId: dataset!.id, jobId: 'job-2' }) as never, context);
    const second = (await runs()).find((r: { status: string }) => r.status === 'waiting');
    await worker.handler({ Payload: { kind: 'waitForUpload', runId: second.id, taskToken: 'token-2' } } as never, context);
    sfnCalls.length = 0;
    await dispatcher.handler(uploadEvent('Import finished', { datasetId: dataset!.id, jobId: 'job-2', graphs: ['https://x.example/g1', 'https://x.example/g2'], ok: true }) as never, context);
    expect(sfnCalls.find((c) => c.action === 'SendTaskSuccess')!.input).toEqual({ taskToken: 'token-2', output: JSON.stringify({ system_uploadedGraphIRI: 'https://x.example/g1' }) });
    const another = sfnCalls.find((c) => c.action === 'StartExecution')!;
    expect(JSON.parse(String(another.input.input)).variables).toMatchObject({ system_uploadedGraphIRI: 'https://x.example/g2' });

    // The upload can end before the execution reaches its wait: the outcome waits on the run,
    // and the worker delivers it as soon as it gets the token.
    await dispatcher.handler(uploadEvent('Import started', { datasetId: dataset!.id, jobId: 'job-3' }) as never, context);
    const early = (await runs()).find((r: { status: string }) => r.status === 'waiting');
    sfnCalls.length = 0;
    await dispatcher.handler(uploadEvent('Import finished', { datasetId: dataset!.id, jobId: 'job-3', graphs: ['https://x.example/g3'], ok: true }) as never, context);
    expect(sfnCalls.filter((c) => c.action.startsWith('SendTask'))).toEqual([]);
    await worker.handler({ Payload: { kind: 'waitForUpload', runId: early.id, taskToken: 'token-3' } } as never, context);
    expect(sfnCalls.filter((c) => c.action.startsWith('SendTask'))).toEqual([
      { action: 'SendTaskSuccess', input: { taskToken: 'token-3', output: JSON.stringify({ system_uploadedGraphIRI: 'https://x.example/g3' }) } },
    ]);

    // S3 "Object Created" through EventBridge: graph blobs are not assets; an asset not yet
    // recorded throws, so the asynchronous invocation is retried.
    const objectCreated = (key: string) => ({ version: '0', id: 'e', source: 'aws.s3', 'detail-type': 'Object Created', account: '123', time: '', region: 'eu-west-1', resources: [], detail: { bucket: { name: 'data' }, object: { key } } });
    await expect(dispatcher.handler(objectCreated(`datasets/${dataset!.id}/graphs/x.nt.gz`) as never, context)).resolves.toBeUndefined();
    await expect(dispatcher.handler(objectCreated(`datasets/${dataset!.id}/assets/missing/v1`) as never, context)).rejects.toThrow(/not recorded yet/);
  });

  describe('hostile input, as the deployed functions meet it (the parsers and the outbound guard are shared code)', () => {
    async function operator() {
      const { awsServices } = await import('../../functions/composition/aws.js');
      const services = await awsServices();
      const { account: admin } = await services.accounts.ensureAdministrator('ops', 'ops-password-123');
      const { token } = await services.auth.issueToken(admin, { description: 'hardening', readOnly: false }, 'https://api.example.org');
      return { services, admin, token };
    }

    /** A multipart simple upload through the imports function, then the worker function run with what it was invoked with. */
    async function uploadAndRunWorker(token: string, dataset: string, fileName: string, content: string) {
      const boundary = 'hardening-boundary';
      const body = Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${fileName}"\r\nContent-Type: application/octet-stream\r\n\r\n${content}\r\n--${boundary}--\r\n`,
      );
      const e = event('POST', `/datasets/ops/${dataset}/jobs`, { token, headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } });
      e.body = body.toString('base64');
      e.isBase64Encoded = true;
      lambdaInvokes.length = 0;
      const created = await invoke('imports', e);
      expect(created.statusCode, created.body).toBe(201);
      expect(lambdaInvokes).toEqual([{ functionName: 'import-worker', payload: { kind: 'import', datasetId: expect.any(String), jobId: created.json.jobId } }]);
      const worker = await import('../../functions/handlers/import-worker.js');
      await worker.handler(lambdaInvokes[0]!.payload as never, context);
      const job = await invoke('imports', event('GET', `/datasets/ops/${dataset}/jobs/${created.json.jobId}`, { token }));
      expect(job.statusCode).toBe(200);
      return job.json;
    }

    it('the dataset SPARQL function answers a deeply nested query with 400 and keeps answering', async () => {
      const { token } = await operator();
      await invoke('datasets', event('POST', '/datasets/ops', { token, body: { name: 'nested-queries', accessLevel: 'public' } }));
      const nested = `SELECT * WHERE ${'{'.repeat(5000)} ?s ?p ?o ${'}'.repeat(5000)}`;
      const refused = await invoke('dataset-sparql', event('GET', '/datasets/ops/nested-queries/sparql', { query: `query=${encodeURIComponent(nested)}` }));
      expect(refused.statusCode).toBe(400);
      expect(refused.body).toMatch(/nest/i);
      const ask = await invoke('dataset-sparql', event('GET', '/datasets/ops/nested-queries/sparql', { query: `query=${encodeURIComponent('ASK { }')}`, headers: { accept: 'application/sparql-results+json' } }));
      expect(ask.statusCode).toBe(200);
      expect(JSON.parse(ask.body!).boolean).toBe(true);
    }, 60_000);

    it('a billion-laughs RDF/XML upload fails its own job in the worker function; the next upload works', async () => {
      const { services, admin, token } = await operator();
      await invoke('datasets', event('POST', '/datasets/ops', { token, body: { name: 'laughs', accessLevel: 'private' } }));
      const entities = Array.from({ length: 10 }, (_, i) => `<!ENTITY lol${i + 1} "${`&lol${i};`.repeat(10)}">`).join('\n');
      const laughs = `<?xml version="1.0"?>\n<!DOCTYPE rdf:RDF [\n<!ENTITY lol0 "lol">\n${entities}\n]>\n<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns:ex="https://ex.org/"><rdf:Description rdf:about="https://ex.org/a"><ex:p>&lol10;</ex:p></rdf:Description></rdf:RDF>\n`;
      const failed = await uploadAndRunWorker(token, 'laughs', 'laughs.rdf', laughs);
      expect(failed.status).toBe('error');
      expect(failed.error.message).toMatch(/entit/i);
      expect((await services.platform.store.getDataset(admin.uid, 'laughs'))!.statements).toBe(0);

      const fine = await uploadAndRunWorker(token, 'laughs', 'fine.rdf', '<?xml version="1.0"?>\n<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns:ex="https://ex.org/"><rdf:Description rdf:about="https://ex.org/a"><ex:p>fine</ex:p></rdf:Description></rdf:RDF>\n');
      expect(fine.status, JSON.stringify(fine.error)).toBe('finished');
      expect((await services.platform.store.getDataset(admin.uid, 'laughs'))!.statements).toBe(1);
    }, 60_000);

    it('a URL import of the unspecified address is refused by the worker function (no private networks on AWS)', async () => {
      const { token } = await operator();
      await invoke('datasets', event('POST', '/datasets/ops', { token, body: { name: 'fetched', accessLevel: 'private' } }));
      let called = 0;
      const target = createServer((_req, res) => {
        called++;
        res.end('<https://ex.org/a> <https://ex.org/p> "leak" .\n');
      });
      await new Promise<void>((r) => target.listen(0, '::1', () => r()));
      try {
        const port = (target.address() as AddressInfo).port;
        lambdaInvokes.length = 0;
        const created = await invoke('imports', event('POST', '/datasets/ops/fetched/jobs', { token, body: { type: 'download', downloadUrls: [`http://[::]:${port}/data.nt`] } }));
        expect(created.statusCode, created.body).toBe(201);
        const worker = await import('../../functions/handlers/import-worker.js');
        for (const invocation of lambdaInvokes) await worker.handler(invocation.payload as never, context);
        const job = await invoke('imports', event('GET', `/datasets/ops/fetched/jobs/${created.json.jobId}`, { token }));
        expect(job.json.status).toBe('error');
        expect(job.json.error.message).toMatch(/Refused http:\/\/\[::\]/);
        expect(called).toBe(0);
      } finally {
        await new Promise((r) => target.close(r));
      }
    }, 60_000);
  });
});
