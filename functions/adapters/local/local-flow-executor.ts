import './promise-with-resolvers.js';
import { ExecutionError, StateMachine } from 'aws-local-stepfunctions';
import type { AslDefinition } from '../../../statemachines/asl.js';
import { applySubstitutions, TASK_WORKER_SUBSTITUTION, UPLOAD_STATES } from '../../../statemachines/compile.js';
import { forLocalRun, localTaskHandlers, type TaskInvocation } from '../../../statemachines/local.js';
import type { ExecutionResult } from '../../../statemachines/outcome.js';
import type { Logger } from '../../ports/logger.js';
import { defaultLogger } from '../common/powertools-logger.js';
import type { ExecutionInput, FlowExecutor, FlowRuntimeHooks } from '../../ports/flow-executor.js';

/** The Resource the compiled Task states name locally; every one is handled in-process. */
const LOCAL_TASK_WORKER_ARN = 'arn:aws:lambda:local:000000000000:function:flow-task-worker';
const MAX_MACHINES = 200;
/** How long closing waits for task worker calls under way. */
const CLOSE_WAIT_MS = 10_000;

/**
 * What this executor puts in `$$.Task.Token` for one execution. Its task-token wait (a data upload
 * hook's `upload.wait`) is held in-process under that token until `release`.
 */
const inProcessTaskToken = (runId: string) => `in-process:${runId}`;

type Wait = { resolve: (output: Record<string, unknown>) => void; reject: (error: Error) => void };

type Execution = ReturnType<StateMachine['run']>;

/**
 * The embedded FlowExecutor: the same compiled ASL, run in-process by aws-local-stepfunctions.
 * Every Task state calls the task worker directly; when an execution ends, `settle` records the
 * outcome. Executions live in this process: a restart ends them (runs are then marked failed).
 */
export class LocalFlowExecutor implements FlowExecutor {
  private hooks?: FlowRuntimeHooks;
  private readonly machines = new Map<string, StateMachine>();
  private readonly running = new Map<string, Execution>();
  private readonly results = new Map<string, ExecutionResult>();
  /** Task-token waits by token, until released or their execution ends. */
  private readonly waits = new Map<string, Wait>();
  private closing = false;

  constructor(private readonly logger: Logger = defaultLogger) {}

  /** Wired by the composition root once the services exist (they need the executor first). */
  bind(hooks: FlowRuntimeHooks): void {
    this.hooks = hooks;
  }

  async prepare(version: { blueprintUid: string; version: number }): Promise<string> {
    return `local:${version.blueprintUid}:v${version.version}`;
  }

  private machine(executable: string, definition: AslDefinition): StateMachine {
    let machine = this.machines.get(executable);
    if (!machine) {
      const local = forLocalRun(applySubstitutions(definition, { [TASK_WORKER_SUBSTITUTION]: LOCAL_TASK_WORKER_ARN }));
      // Compiled definitions are validated by the compiler's tests (asl-validator); the runner's
      // own validation costs tens of milliseconds per machine.
      machine = new StateMachine(local as never, { validationOptions: { noValidate: true } });
      if (this.machines.size >= MAX_MACHINES) this.machines.clear();
      this.machines.set(executable, machine);
      this.handlersOf.set(machine, local);
    }
    return machine;
  }

  private readonly handlersOf = new WeakMap<StateMachine, AslDefinition>();

  async start(executable: string, definition: AslDefinition, runId: string, input: ExecutionInput): Promise<string> {
    const hooks = this.hooks;
    if (!hooks) throw new Error('LocalFlowExecutor is not bound to the flow runtime');
    const machine = this.machine(executable, definition);
    const local = this.handlersOf.get(machine)!;
    const token = inProcessTaskToken(runId);
    const execution = machine.run(input as never, {
      context: { Task: { Token: token } } as never,
      overrides: {
        taskResourceLocalHandlers: localTaskHandlers(local, (invocation: TaskInvocation, stateName) => {
          const runTask = () => this.tracked(hooks.runTask(invocation));
          return stateName === UPLOAD_STATES.wait ? this.waitForRelease(token, runTask) : runTask();
        }) as never,
      },
    });
    this.running.set(runId, execution);
    void execution.result.then(
      (output: unknown) => this.finish(runId, { kind: 'succeeded', output }),
      (error: unknown) => this.finish(runId, toResult(error)),
    );
    return runId;
  }

  /**
   * A task-token state, as Step Functions runs it: the worker is told the token (it records it on
   * the run and may release it at once), then the state waits until the token is released. The
   * wait is registered first, so a release during the worker's call finds it.
   */
  private async waitForRelease(token: string, invokeWorker: () => Promise<unknown>): Promise<Record<string, unknown>> {
    const released = new Promise<Record<string, unknown>>((resolve, reject) => this.waits.set(token, { resolve, reject }));
    try {
      await invokeWorker();
    } catch (e) {
      this.waits.delete(token);
      throw e;
    }
    return released;
  }

  private async finish(runId: string, result: ExecutionResult): Promise<void> {
    this.running.delete(runId);
    this.waits.delete(inProcessTaskToken(runId));
    // Stopped by the platform closing, not by anyone's abort: the metadata store is going away,
    // and the next start ends such runs as failed, saying the platform stopped.
    if (this.closing) return;
    if (this.results.size >= 1_000) this.results.clear();
    this.results.set(runId, result);
    try {
      await this.hooks?.settle(runId, result);
    } catch (e) {
      this.logger.error('settling a run failed', { runId, error: (e as Error).message });
    }
  }

  async abort(executionRef: string): Promise<void> {
    this.running.get(executionRef)?.abort();
  }

  async result(executionRef: string): Promise<ExecutionResult | null> {
    return this.results.get(executionRef) ?? null;
  }

  async discard(executable: string): Promise<void> {
    this.machines.delete(executable);
  }

  async release(taskToken: string, outcome: { output: Record<string, unknown> } | { error: string; cause: string }): Promise<void> {
    const wait = this.waits.get(taskToken);
    // The execution ended meanwhile, or the token was released before: nothing waits any more.
    if (!wait) return;
    this.waits.delete(taskToken);
    if ('output' in outcome) wait.resolve(outcome.output);
    else wait.reject(Object.assign(new Error(outcome.cause), { name: outcome.error }));
  }

  /** Task worker calls under way: closing waits for them, so none writes to a store that is gone. */
  private readonly inFlight = new Set<Promise<unknown>>();

  private tracked<T>(work: Promise<T>): Promise<T> {
    this.inFlight.add(work);
    const done = () => this.inFlight.delete(work);
    work.then(done, done);
    return work;
  }

  /** Stops every execution (the platform is closing). */
  async abortAll(waitMs = CLOSE_WAIT_MS): Promise<void> {
    this.closing = true;
    for (const execution of this.running.values()) execution.abort();
    // Aborting stops the state machine, not a task the worker is running: let those end (bounded),
    // so their last writes do not reach a metadata store that is closing.
    if (this.inFlight.size === 0) return;
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, waitMs);
      timer.unref();
    });
    await Promise.race([Promise.allSettled([...this.inFlight]), bound]);
    clearTimeout(timer);
  }
}

function toResult(error: unknown): ExecutionResult {
  const e = error as Error & { cause?: { name?: string; message?: string } };
  if (e?.name === 'ExecutionAbortedError') return { kind: 'aborted' };
  if (error instanceof ExecutionError) {
    return { kind: 'failed', error: e.cause?.name ?? 'States.Runtime', cause: e.cause?.message };
  }
  return { kind: 'failed', error: e?.name ?? 'States.Runtime', cause: e?.message ?? String(error) };
}
