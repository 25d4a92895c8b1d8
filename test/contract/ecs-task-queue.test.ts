/**
 * The worker task queue (functions/adapters/aws/ecs-task-queue.ts, over ecs-api.ts) against a
 * recording fake of the ECS JSON API on 127.0.0.1 (ECS has no local stand-in outside the AWS
 * harness): the calls we make (signed, the target header, RunTask's task definition, network and
 * the command override carrying the ids), how a refused RunTask is reported, which jobs stay on
 * the import worker function, and how a stopped task is described to the watchdog. A RunTask
 * "starts" the task by handing its command's arguments to the worker, as the container would.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ecsApi } from '../../functions/adapters/aws/ecs-api.js';
import { EcsTaskQueue, SMALL_IMPORT_BYTES, workerTaskSettings, type WorkerTaskSettings } from '../../functions/adapters/aws/ecs-task-queue.js';
import type { TaskQueue } from '../../functions/ports/task-queue.js';

const SETTINGS: WorkerTaskSettings = {
  cluster: 'arn:aws:ecs:eu-west-1:123456789012:cluster/platform',
  taskDefinition: 'arn:aws:ecs:eu-west-1:123456789012:task-definition/worker:3',
  container: 'app',
  command: ['sh', '-c', 'exec node /app/index.mjs "$@"', 'sh', 'worker'],
  subnets: ['subnet-a', 'subnet-b'],
  securityGroups: ['sg-worker'],
};

interface Call {
  action: string;
  body: Record<string, any>;
  headers: IncomingHttpHeaders;
}

/** What the fake answers; tests change it. */
const ecs = {
  calls: [] as Call[],
  started: [] as string[][],
  refuse: undefined as undefined | { status: number; body: object },
  tasks: new Map<string, Record<string, unknown>>(),
};

let server: Server;
let queue: EcsTaskQueue;
const viaFunction: string[] = [];
const functions: TaskQueue = {
  async enqueueImport(datasetId, jobId) {
    viaFunction.push(`import ${datasetId}/${jobId}`);
  },
  async enqueueServiceLoad(datasetId, serviceId) {
    viaFunction.push(`service ${datasetId}/${serviceId}`);
  },
};

beforeAll(async () => {
  server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      const action = String(req.headers['x-amz-target'] ?? '').replace('AmazonEC2ContainerServiceV20141113.', '');
      const body = JSON.parse(raw || '{}');
      ecs.calls.push({ action, body, headers: req.headers });
      const answer = (status: number, value: object) => {
        res.writeHead(status, { 'content-type': 'application/x-amz-json-1.1' });
        res.end(JSON.stringify(value));
      };
      if (ecs.refuse) return answer(ecs.refuse.status, ecs.refuse.body);
      if (action === 'RunTask') {
        const command: string[] = body.overrides.containerOverrides[0].command;
        const taskArn = `arn:aws:ecs:eu-west-1:123456789012:task/platform/${ecs.started.length + 1}`;
        ecs.started.push(command.slice(SETTINGS.command.length));
        ecs.tasks.set(taskArn, { taskArn, lastStatus: 'RUNNING', containers: [{ name: 'app' }] });
        return answer(200, { tasks: [{ taskArn }], failures: [] });
      }
      if (action === 'DescribeTasks') {
        const arns: string[] = body.tasks;
        return answer(200, {
          tasks: arns.filter((a) => ecs.tasks.has(a)).map((a) => ecs.tasks.get(a)),
          failures: arns.filter((a) => !ecs.tasks.has(a)).map((arn) => ({ arn, reason: 'MISSING' })),
        });
      }
      return answer(400, { __type: 'InvalidParameterException', message: `unexpected ${action}` });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  process.env.AWS_REGION = 'eu-west-1';
  process.env.AWS_ACCESS_KEY_ID = 'AKIDTESTECSQUEUE';
  process.env.AWS_SECRET_ACCESS_KEY = 'not-a-secret';
  queue = new EcsTaskQueue(ecsApi({ endpoint }), SETTINGS, functions);
});
afterAll(async () => {
  await new Promise((r) => server.close(r));
});

const reset = () => {
  ecs.calls.length = 0;
  ecs.started.length = 0;
  ecs.refuse = undefined;
  viaFunction.length = 0;
};

describe('EcsTaskQueue', () => {
  it('starts the worker task for a URL load: a signed RunTask of the task definition on Fargate, the ids in the command override', async () => {
    reset();
    await queue.enqueueImport('ds1', 'job1');
    expect(ecs.started).toEqual([['import', 'ds1', 'job1']]);
    const [call] = ecs.calls;
    expect(call!.action).toBe('RunTask');
    expect(call!.headers['content-type']).toBe('application/x-amz-json-1.1');
    expect(call!.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIDTESTECSQUEUE\/\d{8}\/eu-west-1\/ecs\/aws4_request, SignedHeaders=[^,]*host[^,]*x-amz-target/);
    expect(call!.body).toEqual({
      // The SDK makes RunTask idempotent: a retried request starts no second task.
      clientToken: expect.any(String),
      cluster: SETTINGS.cluster,
      taskDefinition: SETTINGS.taskDefinition,
      launchType: 'FARGATE',
      count: 1,
      startedBy: 'import-job1',
      networkConfiguration: { awsvpcConfiguration: { subnets: ['subnet-a', 'subnet-b'], securityGroups: ['sg-worker'], assignPublicIp: 'ENABLED' } },
      overrides: { containerOverrides: [{ name: 'app', command: [...SETTINGS.command, 'import', 'ds1', 'job1'] }] },
    });
    expect(viaFunction).toEqual([]);
  });

  it(`leaves uploads of at most ${SMALL_IMPORT_BYTES} bytes, and service loads, to the import worker function; larger uploads go to the task`, async () => {
    reset();
    await queue.enqueueImport('ds1', 'small', { bytes: 1000 });
    await queue.enqueueImport('ds1', 'edge', { bytes: SMALL_IMPORT_BYTES });
    await queue.enqueueImport('ds1', 'big', { bytes: SMALL_IMPORT_BYTES + 1 });
    await queue.enqueueServiceLoad('ds1', 'svc1');
    expect(viaFunction).toEqual(['import ds1/small', 'import ds1/edge', 'service ds1/svc1']);
    expect(ecs.started).toEqual([['import', 'ds1', 'big']]);
  });

  it('fails, naming the reason, when ECS refuses RunTask or starts no task', async () => {
    reset();
    ecs.refuse = { status: 400, body: { __type: 'AccessDeniedException', message: 'User is not authorized to perform: ecs:RunTask' } };
    await expect(queue.enqueueImport('ds1', 'job1')).rejects.toThrow('the worker task could not be started (User is not authorized to perform: ecs:RunTask)');
    ecs.refuse = { status: 200, body: { tasks: [], failures: [{ arn: 'x', reason: 'RESOURCE:MEMORY' }] } };
    await expect(queue.enqueueImport('ds1', 'job2')).rejects.toThrow('the worker task could not be started (RESOURCE:MEMORY)');
    expect(ecs.started).toEqual([]);
  });

  it('tells the watchdog a task stopped (with its exit code and reason) or gone, and nothing while it runs', async () => {
    reset();
    await queue.enqueueImport('ds1', 'job1');
    const arn = [...ecs.tasks.keys()].pop()!;
    expect(await queue.workerStopped(arn)).toBeUndefined();
    ecs.tasks.set(arn, { taskArn: arn, lastStatus: 'STOPPED', stoppedReason: 'Essential container in task exited', containers: [{ name: 'bundle', exitCode: 0 }, { name: 'app', exitCode: 137 }] });
    expect(await queue.workerStopped(arn)).toBe('the worker task stopped: exit code 137: Essential container in task exited');
    expect(await queue.workerStopped('arn:aws:ecs:eu-west-1:123456789012:task/platform/gone')).toBe('ECS no longer knows its worker task');
    expect(ecs.calls.filter((c) => c.action === 'DescribeTasks').map((c) => c.body.cluster)).toEqual([SETTINGS.cluster, SETTINGS.cluster, SETTINGS.cluster]);
  });

  it('reads WORKER_TASK, refusing settings it cannot use', () => {
    expect(workerTaskSettings(JSON.stringify(SETTINGS))).toEqual(SETTINGS);
    expect(() => workerTaskSettings('{')).toThrow('WORKER_TASK must be JSON');
    expect(() => workerTaskSettings(JSON.stringify({ ...SETTINGS, subnets: [] as string[], command: 'worker' }))).toThrow(/must hold cluster, taskDefinition/);
    // The watchdog's: only what DescribeTasks needs.
    expect(workerTaskSettings(JSON.stringify({ cluster: SETTINGS.cluster, container: 'app' }))).toEqual({ cluster: SETTINGS.cluster, container: 'app' });
    expect(() => workerTaskSettings(JSON.stringify({ container: 'app' }))).toThrow('WORKER_TASK must hold cluster and container');
  });

  it('a function told only the cluster (the watchdog) cannot start tasks', async () => {
    const describeOnly = new EcsTaskQueue(ecsApi({ endpoint: 'http://127.0.0.1:9' }), { cluster: SETTINGS.cluster, container: 'app' });
    await expect(describeOnly.enqueueImport('ds1', 'job1')).rejects.toThrow('this function may not start the worker task');
  });
});
