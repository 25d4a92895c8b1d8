/**
 * The Step Functions executor and the two flow Lambda entries. Step Functions has no local
 * stand-in, so a fake SFNClient records the commands: these tests check the calls we make (and
 * how answers and errors map back), not Step Functions itself.
 */
import { readFileSync } from 'node:fs';
import {
  CreateStateMachineCommand,
  DeleteStateMachineCommand,
  DescribeExecutionCommand,
  DescribeStateMachineCommand,
  ExecutionAlreadyExists,
  ExecutionDoesNotExist,
  StartExecutionCommand,
  StateMachineAlreadyExists,
  StateMachineDoesNotExist,
  StopExecutionCommand,
  type SFNClient,
} from '@aws-sdk/client-sfn';
import type { Context } from 'aws-lambda';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import {
  STATE_MACHINE_NAME_MAX,
  StepFunctionsExecutor,
  executionArn,
  executionResultOf,
  stateMachineName,
} from '../../../functions/adapters/aws/step-functions-executor.js';
import type { FlowDefinition } from '../../../functions/domain/flows/blueprints/model.js';
import type { ExecutionInput } from '../../../functions/ports/flow-executor.js';
import type { AslDefinition } from '../../../statemachines/asl.js';
import { TASK_WORKER_PLACEHOLDER, compileFlow } from '../../../statemachines/compile.js';
import type { TaskInvocation } from '../../../statemachines/local.js';
import type { ExecutionResult } from '../../../statemachines/outcome.js';

const ROLE_ARN = 'arn:aws:iam::123456789012:role/FlowStateMachineRole';
const TASK_WORKER_ARN = 'arn:aws:lambda:eu-west-1:123456789012:function:flow-task-worker';
const PREFIX = 'LinkedDataPlatform-Stateless-flow';
const UID = '0123456789abcdef01234567';
const SM_NAME = `${PREFIX}-${UID}-v3`;
const SM_ARN = `arn:aws:states:eu-west-1:123456789012:stateMachine:${SM_NAME}`;
const RUN_ID = 'a1b2c3d4e5f6a1b2c3d4e5f6';
const EXEC_ARN = `arn:aws:states:eu-west-1:123456789012:execution:${SM_NAME}:${RUN_ID}`;
const meta = { $metadata: {} };

const flow = JSON.parse(readFileSync(new URL('../../fixtures/flows/linear.json', import.meta.url), 'utf8')) as FlowDefinition;
const definition: AslDefinition = compileFlow(flow);
const input: ExecutionInput = { run: { id: RUN_ID, blueprintId: UID, flowId: flow.id, version: 3, startedBy: 'u1' }, variables: { a: 'b' } };

/** A fake SFNClient: `send` records each command and answers with `respond`. */
function fakeClient(respond: (command: object) => unknown) {
  const calls: { name: string; input: any }[] = [];
  const client = {
    async send(command: { input: unknown }) {
      calls.push({ name: command.constructor.name, input: command.input });
      return respond(command);
    },
  };
  return { client: client as unknown as SFNClient, calls };
}

const executor = (client: SFNClient, logGroupArn?: string) =>
  new StepFunctionsExecutor(client, { roleArn: ROLE_ARN, taskWorkerArn: TASK_WORKER_ARN, namePrefix: PREFIX, ...(logGroupArn ? { logGroupArn } : {}) });

describe('StepFunctionsExecutor.prepare', () => {
  it('creates a STANDARD state machine named <prefix>-<uid>-v<version>, running as the role, with the task worker filled in', async () => {
    const { client, calls } = fakeClient(() => ({ stateMachineArn: SM_ARN, creationDate: new Date() }));
    const arn = await executor(client).prepare({ blueprintUid: UID, version: 3, definition });
    expect(arn).toBe(SM_ARN);
    expect(calls).toHaveLength(1);
    const [call] = calls;
    expect(call!.name).toBe(CreateStateMachineCommand.name);
    expect(call!.input).toMatchObject({ name: SM_NAME, type: 'STANDARD', roleArn: ROLE_ARN });
    expect(call!.input.loggingConfiguration).toBeUndefined();
    expect(call!.input.tags).toEqual([
      { key: 'flow-blueprint', value: UID },
      { key: 'flow-version', value: '3' },
    ]);
    const sent = call!.input.definition as string;
    expect(sent).not.toContain(TASK_WORKER_PLACEHOLDER);
    const parsed = JSON.parse(sent) as AslDefinition;
    const tasks = Object.values(parsed.States).filter((s) => s.Type === 'Task');
    expect(tasks.length).toBeGreaterThan(0);
    // Every task invokes the worker: directly, or (the upload wait) through the task-token integration.
    for (const task of tasks) {
      const { Resource, Parameters } = task as { Resource: string; Parameters: { FunctionName?: string } };
      expect(Resource === TASK_WORKER_ARN || (Resource.endsWith('.waitForTaskToken') && Parameters.FunctionName === TASK_WORKER_ARN)).toBe(true);
    }
    // The compiled definition itself is left alone.
    expect(JSON.stringify(definition)).toContain(TASK_WORKER_PLACEHOLDER);
  });

  it('logs errors (without execution data) to the log group when one is given', async () => {
    const { client, calls } = fakeClient(() => ({ stateMachineArn: SM_ARN }));
    const logGroupArn = 'arn:aws:logs:eu-west-1:123456789012:log-group:flows:*';
    await executor(client, logGroupArn).prepare({ blueprintUid: UID, version: 3, definition });
    expect(calls[0]!.input.loggingConfiguration).toEqual({
      level: 'ERROR',
      includeExecutionData: false,
      destinations: [{ cloudWatchLogsLogGroup: { logGroupArn } }],
    });
  });

  it('uses the existing state machine when the version was prepared before (ARN from the error), after checking it is the same', async () => {
    let created = '';
    const { client, calls } = fakeClient((command) => {
      if (command instanceof CreateStateMachineCommand) {
        created = command.input.definition!;
        throw new StateMachineAlreadyExists({ message: `State Machine Already Exists: '${SM_ARN}'`, ...meta });
      }
      if (command instanceof DescribeStateMachineCommand) {
        // Same definition, other whitespace: still the same machine.
        return { stateMachineArn: SM_ARN, name: SM_NAME, roleArn: ROLE_ARN, definition: JSON.stringify(JSON.parse(created), null, 2) };
      }
      throw new Error('unexpected');
    });
    expect(await executor(client).prepare({ blueprintUid: UID, version: 3, definition })).toBe(SM_ARN);
    expect(calls.map((c) => c.name)).toEqual([CreateStateMachineCommand.name, DescribeStateMachineCommand.name]);
    expect(calls[1]!.input).toEqual({ stateMachineArn: SM_ARN });
  });

  it('builds the ARN from the task worker ARN when the error does not hold it', async () => {
    const { client, calls } = fakeClient((command) => {
      if (command instanceof CreateStateMachineCommand) throw new StateMachineAlreadyExists({ message: 'State Machine Already Exists', ...meta });
      const create = calls[0]!.input;
      return { stateMachineArn: SM_ARN, roleArn: ROLE_ARN, definition: create.definition };
    });
    expect(await executor(client).prepare({ blueprintUid: UID, version: 3, definition })).toBe(SM_ARN);
    expect(calls[1]!.input).toEqual({ stateMachineArn: SM_ARN });
  });

  it('refuses an existing state machine with another definition or role', async () => {
    for (const existing of [
      { roleArn: ROLE_ARN, definition: JSON.stringify({ StartAt: 'x', States: { x: { Type: 'Succeed' } } }) },
      { roleArn: 'arn:aws:iam::123456789012:role/Other', definition: undefined as string | undefined },
    ]) {
      const { client, calls } = fakeClient((command) => {
        if (command instanceof CreateStateMachineCommand) throw new StateMachineAlreadyExists({ message: `State Machine Already Exists: '${SM_ARN}'`, ...meta });
        return { stateMachineArn: SM_ARN, roleArn: existing.roleArn, definition: existing.definition ?? calls[0]!.input.definition };
      });
      await expect(executor(client).prepare({ blueprintUid: UID, version: 3, definition })).rejects.toThrow(/already exists with another definition or role/);
    }
  });

  it('passes other errors on', async () => {
    const { client } = fakeClient(() => {
      throw Object.assign(new Error('denied'), { name: 'AccessDeniedException' });
    });
    await expect(executor(client).prepare({ blueprintUid: UID, version: 3, definition })).rejects.toThrow('denied');
  });
});

describe('state machine names', () => {
  it('are <prefix>-<uid>-v<version> when that fits in 80 characters', () => {
    expect(stateMachineName(PREFIX, UID, 3)).toBe(SM_NAME);
    expect(stateMachineName('p', 'a b/c', 12)).toBe('p-a_b_c-v12');
  });

  it('keep the whole prefix, stay unique and within 80 characters when the uid is long', () => {
    const uid = 'u'.repeat(70);
    const a = stateMachineName(PREFIX, uid, 1);
    const b = stateMachineName(PREFIX, `${uid}x`, 1);
    const c = stateMachineName(PREFIX, uid, 123456);
    for (const name of [a, b, c]) {
      expect(name.length).toBeLessThanOrEqual(STATE_MACHINE_NAME_MAX);
      expect(name.startsWith(`${PREFIX}-`)).toBe(true);
      expect(name).toMatch(/^[A-Za-z0-9_-]+$/);
    }
    expect(a).toMatch(/-v1$/);
    expect(c).toMatch(/-v123456$/);
    expect(new Set([a, b, c]).size).toBe(3);
    expect(stateMachineName(PREFIX, uid, 1)).toBe(a);
  });
});

describe('StepFunctionsExecutor: runs', () => {
  it('starts an execution named after the run with the input as JSON', async () => {
    const { client, calls } = fakeClient(() => ({ executionArn: EXEC_ARN, startDate: new Date() }));
    expect(await executor(client).start(SM_ARN, definition, RUN_ID, input)).toBe(EXEC_ARN);
    expect(calls).toEqual([{ name: StartExecutionCommand.name, input: { stateMachineArn: SM_ARN, name: RUN_ID, input: JSON.stringify(input) } }]);
  });

  it("answers the run's execution when it was started before", async () => {
    const { client } = fakeClient(() => {
      throw new ExecutionAlreadyExists({ message: 'Execution Already Exists', ...meta });
    });
    expect(await executor(client).start(SM_ARN, definition, RUN_ID, input)).toBe(EXEC_ARN);
    expect(executionArn(SM_ARN, RUN_ID)).toBe(EXEC_ARN);
  });

  it('aborts with StopExecution', async () => {
    const { client, calls } = fakeClient(() => ({ stopDate: new Date() }));
    await executor(client).abort(EXEC_ARN);
    expect(calls).toHaveLength(1);
    expect(calls[0]!.name).toBe(StopExecutionCommand.name);
    expect(calls[0]!.input.executionArn).toBe(EXEC_ARN);
  });

  it('discards with DeleteStateMachine, quietly when it is gone already', async () => {
    const { client, calls } = fakeClient(() => ({}));
    await executor(client).discard(SM_ARN);
    expect(calls).toEqual([{ name: DeleteStateMachineCommand.name, input: { stateMachineArn: SM_ARN } }]);
    const gone = fakeClient(() => {
      throw new StateMachineDoesNotExist({ message: 'gone', ...meta });
    });
    await expect(executor(gone.client).discard(SM_ARN)).resolves.toBeUndefined();
  });
});

describe('StepFunctionsExecutor.result', () => {
  const resultFor = async (answer: object): Promise<ExecutionResult | null> => {
    const { client, calls } = fakeClient(() => ({ executionArn: EXEC_ARN, stateMachineArn: SM_ARN, startDate: new Date(), ...answer }));
    const result = await executor(client).result(EXEC_ARN);
    expect(calls).toEqual([{ name: DescribeExecutionCommand.name, input: { executionArn: EXEC_ARN } }]);
    return result;
  };

  it('maps SUCCEEDED to succeeded with the parsed output', async () => {
    const output = { run: { id: RUN_ID }, variables: {}, tasks: { a: { status: 'finished', output: {} } } };
    expect(await resultFor({ status: 'SUCCEEDED', output: JSON.stringify(output) })).toEqual({ kind: 'succeeded', output });
  });

  it('maps FAILED and TIMED_OUT to failed with error and cause', async () => {
    const cause = JSON.stringify({ taskId: 'a', status: 'failed' });
    expect(await resultFor({ status: 'FAILED', error: 'Flow.failed', cause })).toEqual({ kind: 'failed', error: 'Flow.failed', cause });
    expect(await resultFor({ status: 'TIMED_OUT' })).toEqual({ kind: 'failed', error: 'States.Timeout' });
    expect(await resultFor({ status: 'TIMED_OUT', error: 'States.Timeout', cause: 'too long' })).toEqual({ kind: 'failed', error: 'States.Timeout', cause: 'too long' });
  });

  it('maps ABORTED to aborted, and RUNNING and PENDING_REDRIVE to null', async () => {
    expect(await resultFor({ status: 'ABORTED' })).toEqual({ kind: 'aborted' });
    expect(await resultFor({ status: 'RUNNING' })).toBeNull();
    expect(await resultFor({ status: 'PENDING_REDRIVE' })).toBeNull();
  });

  it('answers null for an unknown execution', async () => {
    const { client } = fakeClient(() => {
      throw new ExecutionDoesNotExist({ message: 'no such execution', ...meta });
    });
    expect(await executor(client).result(EXEC_ARN)).toBeNull();
  });

  it("status (the watchdog's question) tells a running execution from one that does not exist, and passes other errors on", async () => {
    const running = fakeClient(() => ({ executionArn: EXEC_ARN, stateMachineArn: SM_ARN, startDate: new Date(), status: 'RUNNING' }));
    expect(await executor(running.client).status(EXEC_ARN)).toBe('running');
    expect(running.calls).toEqual([{ name: DescribeExecutionCommand.name, input: { executionArn: EXEC_ARN } }]);
    const ended = fakeClient(() => ({ executionArn: EXEC_ARN, stateMachineArn: SM_ARN, startDate: new Date(), status: 'ABORTED' }));
    expect(await executor(ended.client).status(EXEC_ARN)).toEqual({ kind: 'aborted' });
    const missing = fakeClient(() => {
      throw new ExecutionDoesNotExist({ message: 'no such execution', ...meta });
    });
    expect(await executor(missing.client).status(EXEC_ARN)).toBe('unknown');
    // A run whose start was never recorded still holds its id, not an ARN.
    const notAnArn = fakeClient(() => {
      throw Object.assign(new Error("Invalid Arn: 'a1b2'"), { name: 'InvalidArn' });
    });
    expect(await executor(notAnArn.client).status(RUN_ID)).toBe('unknown');
    const denied = fakeClient(() => {
      throw Object.assign(new Error('not authorized'), { name: 'AccessDeniedException' });
    });
    await expect(executor(denied.client).status(EXEC_ARN)).rejects.toThrow(/not authorized/);
  });
});

// The Lambda entries, over a fake composition root: what they pass to the flow runtime.
const fake = vi.hoisted(() => ({
  runTask: vi.fn(),
  settle: vi.fn(),
  result: vi.fn(),
}));
vi.mock('../../../functions/composition/aws.js', () => ({
  awsServices: async () => ({
    flowRuntime: { runTask: fake.runTask, settle: fake.settle },
    platform: { flowExecutor: { result: fake.result } },
  }),
  // The entries' logging (middleware and logger) is not what these tests are about: no-ops stand in.
  awsLambda: { middlewares: { before: () => {} } },
  awsLogger: { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} },
}));
const { handler: taskWorker } = await import('../../../functions/handlers/flow-task-worker.js');
const { handler: settle } = await import('../../../functions/handlers/flow-settle.js');
const context = {} as Context;

describe('flow-task-worker handler', () => {
  beforeEach(() => vi.clearAllMocks());
  const invocation: TaskInvocation = {
    taskId: 'a',
    type: 'setVariables',
    label: 'A',
    settings: { values: { x: '1' } },
    state: { run: { id: RUN_ID }, variables: {}, tasks: {} },
  };

  it('runs the task and returns its output', async () => {
    fake.runTask.mockResolvedValue({ variables: { x: '1' } });
    expect(await taskWorker(invocation, context)).toEqual({ variables: { x: '1' } });
    // No remaining time known: no limit.
    expect(fake.runTask).toHaveBeenCalledWith(invocation, {});
    // Lambda's remaining time goes with the task, so it ends (recorded) before the function does.
    await taskWorker(invocation, { getRemainingTimeInMillis: () => 600_000 } as Context);
    expect(fake.runTask).toHaveBeenLastCalledWith(invocation, { timeLeftMs: 600_000 });
  });

  it('returns {} for no output, and fails the task by throwing', async () => {
    fake.runTask.mockResolvedValue(undefined);
    expect(await taskWorker(invocation, context)).toEqual({});
    fake.runTask.mockRejectedValue(new Error('boom'));
    await expect(taskWorker(invocation, context)).rejects.toThrow('boom');
  });

  it('refuses an event that is not a task invocation', async () => {
    await expect(taskWorker({} as TaskInvocation, context)).rejects.toThrow(/not a task invocation/);
    expect(fake.runTask).not.toHaveBeenCalled();
  });
});

describe('flow-settle handler', () => {
  beforeEach(() => vi.clearAllMocks());
  const event = (detail: Record<string, unknown>) => ({
    version: '0',
    id: 'e',
    'detail-type': 'Step Functions Execution Status Change' as const,
    source: 'aws.states',
    account: '123456789012',
    time: '2026-01-01T00:00:00Z',
    region: 'eu-west-1',
    resources: [EXEC_ARN],
    detail: { executionArn: EXEC_ARN, stateMachineArn: SM_ARN, name: RUN_ID, ...detail } as any,
  });

  it('settles the run named by the execution with its result', async () => {
    const output = { run: { id: RUN_ID }, variables: {}, tasks: {} };
    await settle(event({ status: 'SUCCEEDED', output: JSON.stringify(output), outputDetails: { included: true } }), context);
    await settle(event({ status: 'FAILED', error: 'Flow.failed', cause: '{"taskId":"a"}' }), context);
    await settle(event({ status: 'TIMED_OUT', error: null, cause: null }), context);
    await settle(event({ status: 'ABORTED', output: null }), context);
    expect(fake.settle.mock.calls).toEqual([
      [RUN_ID, { kind: 'succeeded', output }],
      [RUN_ID, { kind: 'failed', error: 'Flow.failed', cause: '{"taskId":"a"}' }],
      [RUN_ID, { kind: 'failed', error: 'States.Timeout' }],
      [RUN_ID, { kind: 'aborted' }],
    ]);
    expect(fake.result).not.toHaveBeenCalled();
  });

  it('reads the output from the execution when the event could not carry it', async () => {
    const output = { big: true };
    fake.result.mockResolvedValue({ kind: 'succeeded', output });
    await settle(event({ status: 'SUCCEEDED', output: null, outputDetails: { included: false } }), context);
    expect(fake.result).toHaveBeenCalledWith(EXEC_ARN);
    expect(fake.settle).toHaveBeenCalledWith(RUN_ID, { kind: 'succeeded', output });
  });

  it('ignores running statuses and malformed events', async () => {
    await settle(event({ status: 'RUNNING' }), context);
    const error = vi.spyOn(console, 'error').mockImplementation(() => {});
    await settle({ detail: {} } as any, context);
    error.mockRestore();
    expect(fake.settle).not.toHaveBeenCalled();
  });

  it('maps statuses the same way as DescribeExecution does', () => {
    expect(executionResultOf({ status: 'SUCCEEDED', output: 'not json' })).toEqual({ kind: 'succeeded', output: 'not json' });
    expect(executionResultOf({ status: 'FAILED' })).toEqual({ kind: 'failed', error: 'States.Runtime' });
    expect(executionResultOf({ status: 'SOMETHING_NEW' })).toBeNull();
  });
});
