/**
 * The AWS harness runs ECS tasks as Fargate would (issue 19), on the real synthesized app: the
 * ECS API on the harness endpoint (signed calls, IAM-checked as the caller's role), tasks started
 * from the template's task definitions (the bundle init container copies the container bundle
 * from cdk.out as the task role, the app container runs it as a Node process), the upload host's
 * ECS service running from the start behind the API's VPC-link routes.
 */
import { createHash, createHmac } from 'node:crypto';
import { SignatureV4 } from '@smithy/signature-v4';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AwsHarness } from '../support/aws-harness/index.js';

/** node:crypto as the signer's SHA-256 (an HMAC when given a secret). */
class Sha256 {
  private readonly h;
  constructor(secret?: string | Uint8Array) {
    this.h = secret === undefined ? createHash('sha256') : createHmac('sha256', secret);
  }
  update(data: string | Uint8Array): void {
    this.h.update(data);
  }
  async digest(): Promise<Uint8Array> {
    return new Uint8Array(this.h.digest());
  }
}

/** An ECS API call to the harness endpoint, signed as `accessKeyId` (a function's or role's logical id). */
async function ecsCall(aws: AwsHarness, accessKeyId: string, action: string, input: unknown): Promise<{ status: number; body: any }> {
  const url = new URL(aws.endpoint.url);
  const signer = new SignatureV4({ credentials: { accessKeyId, secretAccessKey: 'harness-secret' }, region: 'eu-west-1', service: 'ecs', sha256: Sha256 as never });
  const body = JSON.stringify(input);
  const signed = await signer.sign({
    method: 'POST',
    protocol: 'http:',
    hostname: url.hostname,
    port: Number(url.port),
    path: '/',
    headers: { host: url.host, 'content-type': 'application/x-amz-json-1.1', 'x-amz-target': `AmazonEC2ContainerServiceV20141113.${action}` },
    body,
  });
  const { host: _host, ...headers } = signed.headers;
  const res = await fetch(url, { method: 'POST', headers, body });
  return { status: res.status, body: await res.json() };
}

const fnId = (aws: AwsHarness, prefix: string) => aws.fn(prefix).logicalId;
const taskDef = (aws: AwsHarness, prefix: string) => aws.app.taskDefinitions.find((d) => d.logicalId.startsWith(prefix))!;

/** RunTask input as the platform's adapters send it (Fargate, the task's subnets, the app container's command). */
function runTaskInput(aws: AwsHarness, defPrefix: string, args: string[]) {
  const def = taskDef(aws, defPrefix);
  const app = def.containers.find((c) => c.name === 'app')!;
  return {
    cluster: aws.app.clusters[0]!.arn,
    taskDefinition: def.arn,
    launchType: 'FARGATE',
    count: 1,
    networkConfiguration: { awsvpcConfiguration: { subnets: ['subnet-1'], securityGroups: ['sg-1'], assignPublicIp: 'ENABLED' } },
    overrides: { containerOverrides: [{ name: 'app', command: [...app.command!.slice(0, 4), ...args] }] },
  };
}

describe('AWS harness: ECS tasks and the VPC-link routes', () => {
  let aws: AwsHarness;
  beforeAll(async () => {
    aws = await AwsHarness.start();
  }, 300_000);
  afterAll(() => aws?.stop());

  it('runs the upload host service from the start and forwards its VPC-link routes to it', async () => {
    const service = aws.app.ecsServices.find((s) => s.logicalId.startsWith('UploadHost'))!;
    const hosts = aws.ecs.tasks.filter((t) => t.group === `service:${service.name}`);
    expect(hosts).toHaveLength(service.desiredCount);
    expect(hosts.map((t) => t.lastStatus)).toEqual(hosts.map(() => 'RUNNING'));
    // The init container copied the bundle and finished; the app serves.
    expect(hosts[0]!.containers.find((c) => c.name === 'bundle')).toMatchObject({ lastStatus: 'STOPPED', exitCode: 0 });
    expect(hosts[0]!.containers.find((c) => c.name === 'app')!.lastStatus).toBe('RUNNING');

    // A tus route (no token): the upload host answers, not API Gateway (no route, or no integration).
    const res = await fetch(`${aws.apiUrl}/datasets/someone/something/assets/add`, { method: 'POST', headers: { 'tus-resumable': '1.0.0', 'upload-length': '5' } });
    expect(res.headers.get('apigw-requestid')).toBeTruthy();
    expect(aws.gateway.gatewayErrors.filter((e) => e.path.endsWith('/assets/add'))).toEqual([]);
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    expect(await res.json()).toHaveProperty('message');

    // API Gateway's 10 MB request limit holds on the private integration too.
    const big = await fetch(`${aws.apiUrl}/datasets/someone/something/assets/add/some-upload`, {
      method: 'PATCH',
      headers: { 'tus-resumable': '1.0.0', 'upload-offset': '0', 'content-type': 'application/offset+octet-stream' },
      body: new Uint8Array(10 * 1024 * 1024 + 1),
    });
    expect(big.status).toBe(413);
    expect(aws.gateway.gatewayErrors.at(-1)).toMatchObject({ status: 413 });
  });

  it('answers a task\'s metadata endpoint as Fargate does: its ARN, and 127.0.0.1 as every container\'s address', async () => {
    const host = aws.ecs.tasks.find((t) => t.group?.startsWith('service:') && t.lastStatus === 'RUNNING')!;
    const res = await fetch(`${aws.ecs.metadataUri(host.taskArn, 'app')}/task`);
    const body = await res.json();
    expect(body.TaskARN).toBe(host.taskArn);
    expect(body.Containers.find((c: any) => c.Name === 'app').Networks[0].IPv4Addresses).toEqual(['127.0.0.1']);
  });

  it('runs a task started by RunTask (as the imports function) from the template\'s task definition: a bad argument exits non-zero and the task is STOPPED with that exit code', async () => {
    const run = await ecsCall(aws, fnId(aws, 'ImportsFunction'), 'RunTask', runTaskInput(aws, 'WorkerTask', ['worker', 'no-such-kind']));
    expect(run.status).toBe(200);
    expect(run.body.failures).toEqual([]);
    const arn = run.body.tasks[0].taskArn as string;
    expect(arn).toMatch(/^arn:aws:ecs:eu-west-1:123456789012:task\/.+\/[0-9a-f]{32}$/);

    const task = await aws.ecs.waitStopped(arn);
    expect(task.stopCode).toBe('EssentialContainerExited');
    const app = task.containers.find((c) => c.name === 'app')!;
    expect(app.exitCode).toBe(1);
    expect(app.logTail).toContain('usage');
    expect(task.containers.find((c) => c.name === 'bundle')!.exitCode).toBe(0);

    // The watchdog may describe it (DescribeTasks in the cluster): STOPPED with the container's exit code.
    const described = await ecsCall(aws, fnId(aws, 'WatchdogFunction'), 'DescribeTasks', { cluster: task.clusterArn, tasks: [arn] });
    expect(described.status).toBe(200);
    expect(described.body.tasks[0]).toMatchObject({ lastStatus: 'STOPPED', stopCode: 'EssentialContainerExited' });
    expect(described.body.tasks[0].containers.find((c: any) => c.name === 'app').exitCode).toBe(1);
  }, 60_000);

  it('runs the bundle\'s `version` role to the end: exit 0, its output kept', async () => {
    const run = await ecsCall(aws, fnId(aws, 'ImportsFunction'), 'RunTask', runTaskInput(aws, 'WorkerTask', ['version']));
    const task = await aws.ecs.waitStopped(run.body.tasks[0].taskArn);
    const app = task.containers.find((c) => c.name === 'app')!;
    expect(app.exitCode).toBe(0);
    expect(JSON.parse(app.logTail.trim().split('\n').pop()!)).toHaveProperty('version');
  }, 60_000);

  it('stops a running task on StopTask (as a function granted ecs:StopTask): STOPPED, UserInitiated', async () => {
    // The upload host serves until stopped; nobody is granted RunTask of it, so the operator starts one.
    const def = taskDef(aws, 'UploadHostTask');
    const run = await aws.ecs.handle(undefined, 'operator', 'RunTask', { ...runTaskInput(aws, 'UploadHostTask', ['upload-host']), taskDefinition: def.arn });
    const arn = JSON.parse(run.body).tasks[0].taskArn as string;
    for (let i = 0; i < 300 && aws.ecs.task(arn)!.lastStatus !== 'RUNNING'; i++) await new Promise((r) => setTimeout(r, 100));
    expect(aws.ecs.task(arn)!.lastStatus).toBe('RUNNING');

    const stop = await ecsCall(aws, fnId(aws, 'ServicesFunction'), 'StopTask', { cluster: aws.app.clusters[0]!.arn, task: arn, reason: 'test' });
    expect(stop.status).toBe(200);
    const task = await aws.ecs.waitStopped(arn);
    expect(task).toMatchObject({ lastStatus: 'STOPPED', stopCode: 'UserInitiated', stoppedReason: 'test' });
    expect(task.containers.find((c) => c.name === 'app')!.lastStatus).toBe('STOPPED');
  }, 60_000);

  it('refuses RunTask to a function the template does not grant it, and a call without a network configuration', async () => {
    const refused = await ecsCall(aws, fnId(aws, 'AccountsFunction'), 'RunTask', runTaskInput(aws, 'WorkerTask', ['version']));
    expect(refused.status).toBe(400);
    expect(refused.body.__type).toBe('AccessDeniedException');
    expect(refused.body.message).toContain('ecs:RunTask');

    const { networkConfiguration: _n, ...withoutNetwork } = runTaskInput(aws, 'WorkerTask', ['version']);
    const invalid = await ecsCall(aws, fnId(aws, 'ImportsFunction'), 'RunTask', withoutNetwork);
    expect(invalid.body.__type).toBe('InvalidParameterException');
  });
});

describe('AWS harness: ECS with grants removed', () => {
  let aws: AwsHarness;
  beforeAll(async () => {
    aws = await AwsHarness.start({
      removeGrants: [
        { functionOrRole: 'ImportsFunction', action: 'ecs:RunTask' },
        { functionOrRole: 'ServicesFunction', action: 'iam:PassRole' },
        { functionOrRole: 'WorkerTaskTaskRole', action: 's3:GetObject' },
      ],
    });
  }, 300_000);
  afterAll(() => aws?.stop());

  it('refuses RunTask without ecs:RunTask, and without iam:PassRole of the task\'s roles; no task starts', async () => {
    const before = aws.ecs.tasks.length;
    const noRun = await ecsCall(aws, fnId(aws, 'ImportsFunction'), 'RunTask', runTaskInput(aws, 'WorkerTask', ['version']));
    expect(noRun.body.__type).toBe('AccessDeniedException');
    expect(noRun.body.message).toContain('ecs:RunTask');

    const noPass = await ecsCall(aws, fnId(aws, 'ServicesFunction'), 'RunTask', runTaskInput(aws, 'SparqlHostsTask', ['version']));
    expect(noPass.body.__type).toBe('AccessDeniedException');
    expect(noPass.body.message).toContain('iam:PassRole');
    expect(aws.ecs.tasks.length).toBe(before);
  });

  it('fails to start a task whose task role may not read the bundle: the init container exits 1, the app never runs', async () => {
    const run = await aws.ecs.handle(undefined, 'operator', 'RunTask', runTaskInput(aws, 'WorkerTask', ['version']));
    const task = await aws.ecs.waitStopped(JSON.parse(run.body).tasks[0].taskArn);
    expect(task.stopCode).toBe('TaskFailedToStart');
    expect(task.containers.find((c) => c.name === 'bundle')).toMatchObject({ exitCode: 1 });
    expect(task.containers.find((c) => c.name === 'bundle')!.logTail).toContain('403');
    expect(task.containers.find((c) => c.name === 'app')!.exitCode).toBeUndefined();
  }, 60_000);
});
