import { createHash } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import {
  CreateStateMachineCommand,
  DeleteStateMachineCommand,
  DescribeExecutionCommand,
  DescribeStateMachineCommand,
  SendTaskFailureCommand,
  SendTaskHeartbeatCommand,
  SendTaskSuccessCommand,
  StartExecutionCommand,
  StopExecutionCommand,
  type SFNClient,
} from '@aws-sdk/client-sfn';
import type { AslDefinition } from '../../../statemachines/asl.js';
import { applySubstitutions, TASK_WORKER_SUBSTITUTION } from '../../../statemachines/compile.js';
import type { ExecutionResult } from '../../../statemachines/outcome.js';
import type { ExecutionInput, FlowExecutor } from '../../ports/flow-executor.js';

export interface StepFunctionsExecutorOptions {
  /** The role every flow state machine runs as (it may invoke the task worker, nothing else). */
  roleArn: string;
  /** Filled in for `${TaskWorkerArn}` in every Task state. */
  taskWorkerArn: string;
  /**
   * Start of every state machine name; IAM and the execution-status rule are scoped to
   * `<namePrefix>-*`, so it must stay the first part of every name.
   */
  namePrefix: string;
  /** When set, state machines log errors (without execution data) to this log group. */
  logGroupArn?: string;
}

/** Step Functions names: at most 80 characters, no spaces, brackets, wildcards or punctuation. */
export const STATE_MACHINE_NAME_MAX = 80;
const UNSAFE_NAME_CHARS = /[^A-Za-z0-9_-]/g;

/**
 * `<prefix>-<blueprintUid>-v<version>`; when that exceeds 80 characters the uid is shortened and
 * a hash of the full name keeps it unique (the prefix always stays whole: IAM scopes to it).
 */
export function stateMachineName(namePrefix: string, blueprintUid: string, version: number): string {
  const uid = blueprintUid.replace(UNSAFE_NAME_CHARS, '_');
  const suffix = `-v${version}`;
  const full = `${namePrefix}-${uid}${suffix}`;
  if (full.length <= STATE_MACHINE_NAME_MAX) return full;
  const hash = createHash('sha256').update(`${blueprintUid}\n${version}`).digest('hex').slice(0, 10);
  const room = STATE_MACHINE_NAME_MAX - namePrefix.length - 1 - hash.length - 1 - suffix.length;
  if (room < 0) throw new Error(`The state machine name prefix "${namePrefix}" is too long to name version ${version}`);
  return `${namePrefix}-${uid.slice(0, room)}${room > 0 ? '-' : ''}${hash}${suffix}`;
}

/** What DescribeExecution and the "Step Functions Execution Status Change" event both carry. */
export interface ExecutionStatusFields {
  status?: string | null;
  output?: string | null;
  error?: string | null;
  cause?: string | null;
}

/**
 * An execution's status as an ExecutionResult: null while it runs (RUNNING, PENDING_REDRIVE) or
 * for a status this code does not know.
 */
export function executionResultOf(execution: ExecutionStatusFields): ExecutionResult | null {
  switch (execution.status) {
    case 'SUCCEEDED':
      return { kind: 'succeeded', output: parseOutput(execution.output) };
    case 'FAILED':
    case 'TIMED_OUT': {
      const error = execution.error || (execution.status === 'TIMED_OUT' ? 'States.Timeout' : 'States.Runtime');
      return { kind: 'failed', error, ...(execution.cause != null ? { cause: execution.cause } : {}) };
    }
    case 'ABORTED':
      return { kind: 'aborted' };
    default:
      return null;
  }
}

function parseOutput(output: string | null | undefined): unknown {
  if (output == null) return null;
  try {
    return JSON.parse(output);
  } catch {
    return output;
  }
}

const errorName = (e: unknown): string | undefined => (e as { name?: string } | null)?.name;

/**
 * FlowExecutor on AWS Step Functions: one STANDARD state machine per flow version, named after
 * the version; one execution per run, named after the run (so starting a run twice starts it once).
 */
export class StepFunctionsExecutor implements FlowExecutor {
  constructor(
    private readonly client: SFNClient,
    private readonly options: StepFunctionsExecutorOptions,
  ) {}

  async prepare(version: { blueprintUid: string; version: number; definition: AslDefinition }): Promise<string> {
    const name = stateMachineName(this.options.namePrefix, version.blueprintUid, version.version);
    const definition = applySubstitutions(version.definition, { [TASK_WORKER_SUBSTITUTION]: this.options.taskWorkerArn });
    try {
      const out = await this.client.send(
        new CreateStateMachineCommand({
          name,
          type: 'STANDARD',
          roleArn: this.options.roleArn,
          definition: JSON.stringify(definition),
          ...(this.options.logGroupArn
            ? {
                loggingConfiguration: {
                  level: 'ERROR',
                  includeExecutionData: false,
                  destinations: [{ cloudWatchLogsLogGroup: { logGroupArn: this.options.logGroupArn } }],
                },
              }
            : {}),
          tags: [
            { key: 'flow-blueprint', value: version.blueprintUid },
            { key: 'flow-version', value: String(version.version) },
          ],
        }),
      );
      if (!out.stateMachineArn) throw new Error(`CreateStateMachine returned no ARN for ${name}`);
      return out.stateMachineArn;
    } catch (e) {
      if (errorName(e) !== 'StateMachineAlreadyExists') throw e;
      // Prepared before (a retry, or two first runs at once): use it if it is the same machine.
      const arn = arnFromMessage(e) ?? this.stateMachineArn(name);
      const existing = await this.client.send(new DescribeStateMachineCommand({ stateMachineArn: arn }));
      if (existing.roleArn !== this.options.roleArn || !sameDefinition(existing.definition, definition)) {
        throw new Error(
          `State machine ${name} already exists with another definition or role (an earlier deployment?); delete it to prepare version ${version.version} again`,
        );
      }
      return existing.stateMachineArn ?? arn;
    }
  }

  async start(executable: string, _definition: AslDefinition, runId: string, input: ExecutionInput): Promise<string> {
    try {
      const out = await this.client.send(new StartExecutionCommand({ stateMachineArn: executable, name: runId, input: JSON.stringify(input) }));
      if (!out.executionArn) throw new Error(`StartExecution returned no ARN for run ${runId}`);
      return out.executionArn;
    } catch (e) {
      // Started before with this name (the run's id): that execution is this run's.
      if (errorName(e) === 'ExecutionAlreadyExists') return executionArn(executable, runId);
      throw e;
    }
  }

  async abort(executionRef: string): Promise<void> {
    await this.client.send(new StopExecutionCommand({ executionArn: executionRef, error: 'Flow.aborted', cause: 'Run aborted' }));
  }

  async result(executionRef: string): Promise<ExecutionResult | null> {
    try {
      const out = await this.client.send(new DescribeExecutionCommand({ executionArn: executionRef }));
      return executionResultOf(out);
    } catch (e) {
      if (errorName(e) === 'ExecutionDoesNotExist') return null;
      throw e;
    }
  }

  async status(executionRef: string): Promise<ExecutionResult | 'running' | 'unknown'> {
    try {
      const out = await this.client.send(new DescribeExecutionCommand({ executionArn: executionRef }));
      return executionResultOf(out) ?? 'running';
    } catch (e) {
      // Never started (the ref is still the run id, not an ARN), or expired from the history.
      if (errorName(e) === 'ExecutionDoesNotExist' || errorName(e) === 'InvalidArn') return 'unknown';
      throw e;
    }
  }

  async discard(executable: string): Promise<void> {
    try {
      await this.client.send(new DeleteStateMachineCommand({ stateMachineArn: executable }));
    } catch (e) {
      if (errorName(e) !== 'StateMachineDoesNotExist') throw e;
    }
  }

  async release(taskToken: string, outcome: { output: Record<string, unknown> } | { error: string; cause: string }): Promise<void> {
    try {
      if ('output' in outcome) await this.client.send(new SendTaskSuccessCommand({ taskToken, output: JSON.stringify(outcome.output) }));
      else await this.client.send(new SendTaskFailureCommand({ taskToken, error: outcome.error, cause: outcome.cause }));
    } catch (e) {
      // The execution ended meanwhile (aborted, timed out): nothing waits any more.
      // A token already used (the outcome was delivered twice, see releaseWaiting) is as good as done.
      if (!['TaskTimedOut', 'TaskDoesNotExist', 'InvalidToken'].includes(errorName(e) ?? '')) throw e;
    }
  }

  /** A long task on the worker task is still working (its state's HeartbeatSeconds start again). */
  async heartbeat(taskToken: string): Promise<void> {
    await this.client.send(new SendTaskHeartbeatCommand({ taskToken }));
  }

  /** Same partition, region and account as the task worker (both belong to this deployment). */
  private stateMachineArn(name: string): string {
    const [arn, partition, , region, account] = this.options.taskWorkerArn.split(':');
    if (arn !== 'arn' || !partition || !region || !account) throw new Error(`Cannot derive a state machine ARN from ${this.options.taskWorkerArn}`);
    return `arn:${partition}:states:${region}:${account}:stateMachine:${name}`;
  }
}

/** `arn:…:stateMachine:<machine>` + run id → `arn:…:execution:<machine>:<run id>`. */
export function executionArn(stateMachineArn: string, name: string): string {
  const parts = stateMachineArn.split(':');
  if (parts[5] !== 'stateMachine' || parts.length !== 7) throw new Error(`Not a state machine ARN: ${stateMachineArn}`);
  parts[5] = 'execution';
  return [...parts, name].join(':');
}

/** StateMachineAlreadyExists says "State Machine Already Exists: 'arn:…'". */
function arnFromMessage(e: unknown): string | undefined {
  const message = (e as { message?: string } | null)?.message ?? '';
  return /arn:[A-Za-z0-9-]+:states:[^\s'"]*:stateMachine:[A-Za-z0-9_-]+/.exec(message)?.[0];
}

function sameDefinition(existing: string | undefined, wanted: AslDefinition): boolean {
  if (!existing) return false;
  try {
    return isDeepStrictEqual(JSON.parse(existing), JSON.parse(JSON.stringify(wanted)));
  } catch {
    return false;
  }
}
