/**
 * The FlowExecutor contract, run against both adapters with the same compiled flow: the local
 * executor (aws-local-stepfunctions in-process, its tasks answered by a gated worker) and the
 * Step Functions executor. Step Functions has no local stand-in, so a recording fake keeps state
 * machines, executions and task tokens the way the service does (its not-found and already-exists
 * answers included); where the local runner executes the states, the test moves the fake's
 * execution on itself ("the execution ended", "it reached the upload wait"). The calls themselves
 * are checked in test/unit/flows/step-functions-executor.test.ts.
 */
import {
  CreateStateMachineCommand,
  DeleteStateMachineCommand,
  DescribeExecutionCommand,
  DescribeStateMachineCommand,
  ExecutionAlreadyExists,
  ExecutionDoesNotExist,
  InvalidToken,
  SendTaskFailureCommand,
  SendTaskSuccessCommand,
  type SFNClient,
  StartExecutionCommand,
  StateMachineAlreadyExists,
  StateMachineDoesNotExist,
  StopExecutionCommand,
  TaskDoesNotExist,
} from '@aws-sdk/client-sfn';
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { StepFunctionsExecutor } from '../../functions/adapters/aws/step-functions-executor.js';
import { LocalFlowExecutor } from '../../functions/adapters/local/local-flow-executor.js';
import type { ExecutionInput, FlowExecutor, UploadWaitInvocation } from '../../functions/ports/flow-executor.js';
import type { FlowDefinition } from '../../functions/ports/records/flow-definition.js';
import type { AslDefinition } from '../../statemachines/asl.js';
import { compileFlow } from '../../statemachines/compile.js';
import type { TaskInvocation } from '../../statemachines/local.js';
import type { ExecutionResult } from '../../statemachines/outcome.js';

const flow = JSON.parse(readFileSync(new URL('../fixtures/flows/linear.json', import.meta.url), 'utf8')) as FlowDefinition;
const definition: AslDefinition = compileFlow(flow);
const BLUEPRINT = '0123456789abcdef01234567';

let counter = 0;
const newRunId = () => `run${++counter}${Math.random().toString(36).slice(2, 8)}`;
const inputOf = (runId: string, extra: Partial<ExecutionInput['run']> = {}): ExecutionInput => ({
  run: { id: runId, blueprintId: BLUEPRINT, flowId: flow.id, version: 1, startedBy: 'u1', ...extra },
  variables: { sourceUrl: 'https://example.org/source.ttl' },
});

interface ExecutorHarness {
  executor: FlowExecutor;
  /** Lets the execution run to its end and waits until its result is known. */
  runToEnd(executionRef: string, runId: string): Promise<void>;
  /** Waits until an ended (e.g. aborted) execution's result is known. */
  ended(runId: string): Promise<void>;
  /** The task token of the run's upload wait, once the execution has reached it. */
  waitToken(executionRef: string, runId: string): Promise<string>;
  close(): void;
}

// ---- Local: the real runner, with a worker whose data tasks wait for a gate ---------------------

function localHarness(): ExecutorHarness {
  const executor = new LocalFlowExecutor();
  let openGate!: () => void;
  const gate = new Promise<void>((r) => (openGate = r));
  const settled = new Map<string, { promise: Promise<void>; resolve: () => void }>();
  const settledOf = (runId: string) => {
    let entry = settled.get(runId);
    if (!entry) {
      let resolve!: () => void;
      entry = { promise: new Promise<void>((r) => (resolve = r)), resolve };
      settled.set(runId, entry);
    }
    return entry;
  };
  const tokens = new Map<string, (token: string) => void>();
  const tokenOf = new Map<string, Promise<string>>();
  const tokenPromise = (runId: string) => {
    if (!tokenOf.has(runId)) tokenOf.set(runId, new Promise<string>((r) => tokens.set(runId, r)));
    return tokenOf.get(runId)!;
  };
  executor.bind({
    async runTask(invocation: TaskInvocation | UploadWaitInvocation) {
      const wait = 'Payload' in invocation ? invocation.Payload : 'kind' in invocation ? invocation : null;
      if (wait && wait.kind === 'waitForUpload') {
        tokenPromise(wait.runId);
        tokens.get(wait.runId)!(wait.taskToken);
        return {};
      }
      await gate;
      return { ok: true };
    },
    async settle(runId: string, _result: ExecutionResult) {
      settledOf(runId).resolve();
    },
  });
  return {
    executor,
    async runToEnd(_ref, runId) {
      openGate();
      await settledOf(runId).promise;
    },
    ended: (runId) => settledOf(runId).promise,
    waitToken: (_ref, runId) => tokenPromise(runId),
    close() {
      openGate();
      executor.abortAll();
    },
  };
}

// ---- Step Functions: a stateful recording fake of the SFN API ------------------------------------

const ACCOUNT = 'arn:aws:states:eu-west-1:123456789012';
const ROLE_ARN = 'arn:aws:iam::123456789012:role/FlowStateMachineRole';

interface FakeExecution {
  status: 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'ABORTED';
  output?: string;
  error?: string;
  cause?: string;
}

function fakeSfn() {
  const machines = new Map<string, { stateMachineArn: string; name: string; roleArn: string; definition: string }>();
  const executions = new Map<string, FakeExecution>();
  const tokens = new Map<string, { executionArn: string; used: boolean; output?: string }>();
  const calls: string[] = [];
  const meta = { $metadata: {} };
  const client = {
    async send(command: { input: any }) {
      calls.push(command.constructor.name);
      const input = command.input;
      if (command instanceof CreateStateMachineCommand) {
        const arn = `${ACCOUNT}:stateMachine:${input.name}`;
        if (machines.has(arn)) throw new StateMachineAlreadyExists({ message: `State Machine Already Exists: '${arn}'`, ...meta });
        machines.set(arn, { stateMachineArn: arn, name: input.name, roleArn: input.roleArn, definition: input.definition });
        return { stateMachineArn: arn, creationDate: new Date() };
      }
      if (command instanceof DescribeStateMachineCommand) {
        const machine = machines.get(input.stateMachineArn);
        if (!machine) throw new StateMachineDoesNotExist({ message: 'State Machine Does Not Exist', ...meta });
        return machine;
      }
      if (command instanceof DeleteStateMachineCommand) {
        if (!machines.delete(input.stateMachineArn)) throw new StateMachineDoesNotExist({ message: 'State Machine Does Not Exist', ...meta });
        return {};
      }
      if (command instanceof StartExecutionCommand) {
        if (!machines.has(input.stateMachineArn)) throw new StateMachineDoesNotExist({ message: 'State Machine Does Not Exist', ...meta });
        const arn = `${input.stateMachineArn.replace(':stateMachine:', ':execution:')}:${input.name}`;
        if (executions.has(arn)) throw new ExecutionAlreadyExists({ message: 'Execution Already Exists', ...meta });
        executions.set(arn, { status: 'RUNNING' });
        return { executionArn: arn, startDate: new Date() };
      }
      if (command instanceof StopExecutionCommand) {
        const execution = executions.get(input.executionArn);
        if (!execution) throw new ExecutionDoesNotExist({ message: 'Execution Does Not Exist', ...meta });
        if (execution.status === 'RUNNING') Object.assign(execution, { status: 'ABORTED', error: input.error, cause: input.cause });
        return { stopDate: new Date() };
      }
      if (command instanceof DescribeExecutionCommand) {
        const execution = executions.get(input.executionArn);
        if (!execution) throw new ExecutionDoesNotExist({ message: 'Execution Does Not Exist', ...meta });
        return { executionArn: input.executionArn, ...execution };
      }
      if (command instanceof SendTaskSuccessCommand || command instanceof SendTaskFailureCommand) {
        const token = tokens.get(input.taskToken);
        if (!token) throw new TaskDoesNotExist({ message: 'Task Does Not Exist', ...meta });
        if (token.used) throw new InvalidToken({ message: 'Invalid Token', ...meta });
        Object.assign(token, { used: true, output: input.output });
        return {};
      }
      throw new Error(`unexpected SFN call ${command.constructor.name}`);
    },
  };
  return {
    client: client as unknown as SFNClient,
    machines,
    executions,
    tokens,
    calls,
    /** The execution reached a `.waitForTaskToken` state: the service makes a token for it. */
    reachWait(executionArn: string): string {
      const token = `token-${tokens.size + 1}`;
      tokens.set(token, { executionArn, used: false });
      return token;
    },
  };
}

function stepFunctionsHarness(): ExecutorHarness {
  const fake = fakeSfn();
  const executor = new StepFunctionsExecutor(fake.client, {
    roleArn: ROLE_ARN,
    taskWorkerArn: 'arn:aws:lambda:eu-west-1:123456789012:function:flow-task-worker',
    namePrefix: 'LinkedDataPlatform-Stateless-flow',
  });
  return {
    executor,
    async runToEnd(ref) {
      const execution = fake.executions.get(ref)!;
      // A waiting execution goes on only once its token was released.
      for (const token of fake.tokens.values()) if (token.executionArn === ref && !token.used) throw new Error('the execution still waits for its upload');
      Object.assign(execution, { status: 'SUCCEEDED', output: JSON.stringify({ run: { id: ref }, tasks: {} }) });
    },
    ended: async () => {},
    waitToken: async (ref) => fake.reachWait(ref),
    close() {},
  };
}

const ADAPTERS: [string, () => ExecutorHarness][] = [
  ['LocalFlowExecutor', localHarness],
  ['StepFunctionsExecutor (stateful recording fake of the SFN API)', stepFunctionsHarness],
];

describe.each(ADAPTERS)('FlowExecutor contract: %s', (_name, create) => {
  let h: ExecutorHarness;
  afterEach(() => h?.close());

  const prepared = (version = 1) => h.executor.prepare({ blueprintUid: BLUEPRINT, version, definition });

  it('prepares a version once: preparing it again gives the same handle, another version another one', async () => {
    h = create();
    const first = await prepared(1);
    expect(first).not.toBe('');
    expect(await prepared(1)).toBe(first);
    expect(await prepared(2)).not.toBe(first);
  });

  it("answers no result while the execution runs, and the run's outcome once it has ended", async () => {
    h = create();
    const executable = await prepared();
    const runId = newRunId();
    const ref = await h.executor.start(executable, definition, runId, inputOf(runId));
    expect(await h.executor.result(ref)).toBeNull();
    await h.runToEnd(ref, runId);
    expect(await h.executor.result(ref)).toMatchObject({ kind: 'succeeded' });
  });

  it('aborting a running execution ends it as aborted', async () => {
    h = create();
    const executable = await prepared();
    const runId = newRunId();
    const ref = await h.executor.start(executable, definition, runId, inputOf(runId));
    await h.executor.abort(ref);
    await h.ended(runId);
    expect(await h.executor.result(ref)).toEqual({ kind: 'aborted' });
  });

  it('holds a run that waits for its upload until its task token is released, then runs it to the end', async () => {
    h = create();
    const executable = await prepared();
    const runId = newRunId();
    const ref = await h.executor.start(executable, definition, runId, inputOf(runId, { waitForUpload: true }));
    const token = await h.waitToken(ref, runId);
    expect(await h.executor.result(ref)).toBeNull();
    await h.executor.release(token, { output: { system_uploadedGraphIRI: 'https://example.org/graphs/new' } });
    await h.runToEnd(ref, runId);
    expect(await h.executor.result(ref)).toMatchObject({ kind: 'succeeded' });
    // Released twice (the outcome delivered again): nothing waits any more, and that is fine.
    await expect(h.executor.release(token, { output: {} })).resolves.toBeUndefined();
  });

  it('releasing a token nothing waits for is fine, with an output or an error', async () => {
    h = create();
    await expect(h.executor.release('no-such-token', { output: {} })).resolves.toBeUndefined();
    await expect(h.executor.release('no-such-token', { error: 'Upload.none', cause: 'no graph' })).resolves.toBeUndefined();
  });

  it('answers no result for an execution it does not know', async () => {
    h = create();
    const executable = await prepared();
    const runId = newRunId();
    // A handle of the same shape as a real one, naming a run that never started.
    const unknownRef = (await h.executor.start(executable, definition, runId, inputOf(runId))).replace(runId, 'never-started');
    expect(await h.executor.result(unknownRef)).toBeNull();
  });

  it('discards a prepared version; discarding again, or what was never prepared, is fine', async () => {
    h = create();
    const executable = await prepared(7);
    await h.executor.discard(executable);
    await expect(h.executor.discard(executable)).resolves.toBeUndefined();
    // Prepared again after a discard, the version runs as before.
    const again = await prepared(7);
    const runId = newRunId();
    const ref = await h.executor.start(again, definition, runId, inputOf(runId));
    await h.runToEnd(ref, runId);
    expect(await h.executor.result(ref)).toMatchObject({ kind: 'succeeded' });
  });
});

describe('StepFunctionsExecutor against the stateful fake', () => {
  it('sends the released output to the waiting task token as JSON, and runs a run once however often it is started', async () => {
    const fake = fakeSfn();
    const executor = new StepFunctionsExecutor(fake.client, {
      roleArn: ROLE_ARN,
      taskWorkerArn: 'arn:aws:lambda:eu-west-1:123456789012:function:flow-task-worker',
      namePrefix: 'LinkedDataPlatform-Stateless-flow',
    });
    const executable = await executor.prepare({ blueprintUid: BLUEPRINT, version: 1, definition });
    const runId = newRunId();
    const ref = await executor.start(executable, definition, runId, inputOf(runId, { waitForUpload: true }));
    expect(await executor.start(executable, definition, runId, inputOf(runId))).toBe(ref);
    expect(fake.executions.size).toBe(1);
    const token = fake.reachWait(ref);
    await executor.release(token, { output: { system_uploadedGraphIRI: 'https://example.org/g' } });
    expect(JSON.parse(fake.tokens.get(token)!.output!)).toEqual({ system_uploadedGraphIRI: 'https://example.org/g' });
  });
});
