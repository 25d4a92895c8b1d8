/**
 * The TaskQueue contract, run against both adapters: the in-process queue and the Lambda queue.
 * Lambda has no local stand-in, so a recording fake LambdaClient keeps each Invoke and, as an
 * asynchronous (`Event`) invocation does, hands its payload to the worker after answering 202;
 * the payload is read the way handlers/import-worker.ts reads it.
 */
import { InvokeCommand, type InvokeCommandInput, type LambdaClient } from '@aws-sdk/client-lambda';
import { describe, expect, it } from 'vitest';
import { LambdaTaskQueue, type WorkerTask } from '../../functions/adapters/aws/lambda-task-queue.js';
import { InProcessTaskQueue } from '../../functions/adapters/local/in-process-tasks.js';
import type { TaskQueue } from '../../functions/ports/task-queue.js';

const WORKER_FUNCTION = 'LinkedDataPlatform-Stateless-ImportWorker';

interface Workers {
  runImport(datasetId: string, jobId: string): Promise<void>;
  loadService(datasetId: string, serviceId: string): Promise<void>;
}

type QueueFactory = (workers: Workers) => TaskQueue;

/** Workers that record each task as it ends; `ended(n)` resolves once n tasks have ended. */
function recordingWorkers(behaviour: (task: string) => Promise<void> = async () => {}) {
  const ended: string[] = [];
  const started: string[] = [];
  let waiters: { n: number; resolve: () => void }[] = [];
  const run = async (task: string) => {
    started.push(task);
    try {
      await behaviour(task);
    } finally {
      ended.push(task);
      waiters = waiters.filter((w) => (ended.length >= w.n ? (w.resolve(), false) : true));
    }
  };
  const workers: Workers = {
    runImport: (datasetId, jobId) => run(`import ${datasetId}/${jobId}`),
    loadService: (datasetId, serviceId) => run(`service ${datasetId}/${serviceId}`),
  };
  const endedCount = (n: number) => new Promise<void>((resolve) => (ended.length >= n ? resolve() : waiters.push({ n, resolve })));
  return { workers, started, ended, endedCount };
}

const inProcess: QueueFactory = (workers) => {
  const queue = new InProcessTaskQueue();
  queue.bind(workers);
  return queue;
};

/** A recording fake of Lambda's Invoke; only asynchronous invocations are what the queue may make. */
function fakeLambda(workers: Workers) {
  const invokes: InvokeCommandInput[] = [];
  const client = {
    async send(command: object) {
      if (!(command instanceof InvokeCommand)) throw new Error(`unexpected Lambda call ${command.constructor.name}`);
      if (command.input.InvocationType !== 'Event') throw new Error('the queue must invoke the worker asynchronously');
      invokes.push(command.input);
      const task = JSON.parse(Buffer.from(command.input.Payload as Uint8Array).toString('utf8')) as WorkerTask;
      // After the 202: the worker runs on its own; its failure is Lambda's to retry, not the caller's.
      setImmediate(() => {
        const work = task.kind === 'import' ? workers.runImport(task.datasetId, task.jobId) : workers.loadService(task.datasetId, task.serviceId);
        work.catch(() => {});
      });
      return { StatusCode: 202, $metadata: {} };
    },
  };
  return { client: client as unknown as LambdaClient, invokes };
}

const lambda: QueueFactory = (workers) => new LambdaTaskQueue(fakeLambda(workers).client, WORKER_FUNCTION);

const ADAPTERS: [string, QueueFactory][] = [
  ['InProcessTaskQueue', inProcess],
  ['LambdaTaskQueue (recording fake of asynchronous Invoke)', lambda],
];

describe.each(ADAPTERS)('TaskQueue contract: %s', (_name, create) => {
  it('has the worker run the import job it was given', async () => {
    const w = recordingWorkers();
    await create(w.workers).enqueueImport('ds1', 'job1');
    await w.endedCount(1);
    expect(w.ended).toEqual(['import ds1/job1']);
  });

  it('has the worker load the service it was given', async () => {
    const w = recordingWorkers();
    await create(w.workers).enqueueServiceLoad('ds1', 'svc1');
    await w.endedCount(1);
    expect(w.ended).toEqual(['service ds1/svc1']);
  });

  it('answers once the work is queued, not when it is done', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const w = recordingWorkers(() => gate);
    await create(w.workers).enqueueImport('ds1', 'job1');
    expect(w.ended).toEqual([]);
    release();
    await w.endedCount(1);
    expect(w.ended).toEqual(['import ds1/job1']);
  });

  it('runs every queued task, each once, even when one of them fails', async () => {
    const w = recordingWorkers(async (task) => {
      if (task === 'import ds1/bad') throw new Error('import failed');
    });
    const queue = create(w.workers);
    await queue.enqueueImport('ds1', 'bad');
    for (const job of ['job1', 'job2', 'job3']) await queue.enqueueImport('ds1', job);
    await queue.enqueueServiceLoad('ds2', 'svc1');
    await w.endedCount(5);
    expect([...w.ended].sort()).toEqual(['import ds1/bad', 'import ds1/job1', 'import ds1/job2', 'import ds1/job3', 'service ds2/svc1']);
  });
});

describe('InProcessTaskQueue specifics', () => {
  it('runs two tasks at once by default; the rest wait their turn', async () => {
    const gates = new Map<string, () => void>();
    let running = 0;
    let most = 0;
    const w = recordingWorkers(
      (task) =>
        new Promise<void>((resolve) => {
          running++;
          most = Math.max(most, running);
          gates.set(task, () => {
            running--;
            resolve();
          });
        }),
    );
    const queue = new InProcessTaskQueue(); // two at a time by default
    queue.bind(w.workers);
    for (const job of ['a', 'b', 'c']) await queue.enqueueImport('ds', job);
    // Let the queue start what it may.
    await new Promise((r) => setImmediate(r));
    expect(w.started).toEqual(['import ds/a', 'import ds/b']);
    gates.get('import ds/a')!();
    await w.endedCount(1);
    await new Promise((r) => setImmediate(r));
    expect(w.started).toEqual(['import ds/a', 'import ds/b', 'import ds/c']);
    gates.get('import ds/b')!();
    gates.get('import ds/c')!();
    await w.endedCount(3);
    expect(most).toBe(2);
  });
});

describe('LambdaTaskQueue specifics', () => {
  it('invokes the worker function asynchronously with { kind, datasetId, jobId | serviceId }', async () => {
    const { client, invokes } = fakeLambda(recordingWorkers().workers);
    const queue = new LambdaTaskQueue(client, WORKER_FUNCTION);
    await queue.enqueueImport('ds1', 'job1');
    await queue.enqueueServiceLoad('ds1', 'svc1');
    expect(invokes.map((i) => ({ ...i, Payload: JSON.parse(Buffer.from(i.Payload as Uint8Array).toString('utf8')) }))).toEqual([
      { FunctionName: WORKER_FUNCTION, InvocationType: 'Event', Payload: { kind: 'import', datasetId: 'ds1', jobId: 'job1' } },
      { FunctionName: WORKER_FUNCTION, InvocationType: 'Event', Payload: { kind: 'service', datasetId: 'ds1', serviceId: 'svc1' } },
    ]);
  });

  it('fails when Lambda refuses the invocation (the work was not queued)', async () => {
    const client = {
      async send() {
        throw Object.assign(new Error('Rate exceeded'), { name: 'TooManyRequestsException' });
      },
    } as unknown as LambdaClient;
    await expect(new LambdaTaskQueue(client, WORKER_FUNCTION).enqueueImport('ds1', 'job1')).rejects.toThrow('Rate exceeded');
  });
});
