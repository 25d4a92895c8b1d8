/**
 * The flow → Amazon States Language compiler. Pure and deterministic: the same flow version
 * always gives the same definition, byte for byte; no AWS or CDK import. `statemachines/README.md`
 * describes the output (run document, state names, outcomes) and the task worker contract.
 *
 * Shape, in short:
 * - `start run` (Pass) shapes the execution input into the run document `{ run, variables, tasks }`.
 * - Each task is a Task state named by its id, invoking the task worker (`${TaskWorkerArn}`) with
 *   its id, type, label and settings plus the run document (`state`); its record goes to
 *   `$.tasks.<id>` (`{ status: "finished", output }`).
 * - The task graph is laid out as sequences and Parallel states: one task feeding several runs
 *   them in parallel, several feeding one makes it wait for all (after the Parallel).
 * - A task whose every incoming connection may be dead (a Decision chose another branch, or the
 *   task before it was skipped) starts with a Choice `<id>.check`: it runs when at least one
 *   incoming connection is live, else `<id>.skipped` records `{ status: "skipped" }`.
 * - Lambda's own errors (a throttle, a service error) are retried with backoff (`LAMBDA_RETRY`);
 *   the task's own failure (what the worker throws) never is.
 * - Failures: `Catch` on `States.Timeout` (when the task has a Timeout) and `States.ALL` leads to
 *   `<id>.timeout` / `<id>.failed`, which record the outcome, then `<id>.outcome` and the Fail
 *   state `<id>.end`, which ends the whole run with Error `Flow.<status>` and the record as Cause.
 *   A Stop run task records `{ status: "aborted" }` and ends the run the same way (`Flow.aborted`).
 */
import { setsVariables } from '../functions/domain/flows/tasks/catalogue.js';
import { TASK_CATALOGUE } from '../functions/domain/flows/tasks/catalogue.js';
import { buildGraph, descendants, topologicalOrder, weakComponents, type TaskGraph } from '../functions/domain/flows/blueprints/graph.js';
import type { FlowDefinition, FlowTask } from '../functions/domain/flows/blueprints/model.js';
import { parseFlow } from '../functions/domain/flows/blueprints/validate.js';
import type { AslDefinition, AslState, Catcher, ChoiceRule, JsonValue, Retrier, TaskState } from './asl.js';
import { RUN_END_ERRORS } from './outcome.js';
import { WORKER_TASK_KIND } from './local.js';

/** The Resource of every Task state; CDK fills it in through `definitionSubstitutions`. */
export const TASK_WORKER_SUBSTITUTION = 'TaskWorkerArn';
export const TASK_WORKER_PLACEHOLDER = '${' + TASK_WORKER_SUBSTITUTION + '}';

export const START_STATE = 'start run';

/**
 * A data upload hook's first run starts when the upload starts and waits, as a
 * `.waitForTaskToken` state, until the upload ends: the platform then sends the graph the run is
 * for (its output is merged into the variables) or fails the wait, which aborts the run.
 */
export const UPLOAD_STATES = {
  check: 'upload.check',
  wait: 'upload.wait',
  received: 'upload.received',
  none: 'upload.none',
} as const;
export const WAIT_FOR_UPLOAD_RESOURCE = 'arn:aws:states:::lambda:invoke.waitForTaskToken';
export const WAIT_FOR_UPLOAD_KIND = 'waitForUpload';
/**
 * Long tasks (issue 19): a task whose type may run long (`mayRunLong` in the catalogue) and whose
 * Timeout is longer than FUNCTION_TASK_SECONDS cannot run in the task worker function (15
 * minutes at most). Its Task state invokes the task worker through the task-token integration
 * with `kind: WORKER_TASK_KIND` and the token; on AWS the worker stages the invocation and starts
 * the worker task (ECS Fargate), which runs the task and sends the token its output or error,
 * with a heartbeat every few minutes (a task that stops sending them fails after
 * WORKER_TASK_HEARTBEAT_SECONDS). The embedded platform runs it in-process, like any task.
 */
export { WORKER_TASK_KIND };
/** The longest Timeout a task runs with in the task worker function: its 900 s less the time to record the task. */
export const FUNCTION_TASK_SECONDS = 840;
export const WORKER_TASK_HEARTBEAT_SECONDS = 300;
/** ASL limit on state names. */
export const MAX_STATE_NAME = 80;
/**
 * Branches per Parallel state. Joining merges the branches' task records with nested
 * `States.JsonMerge` calls, and Step Functions allows at most 10 nested intrinsic functions in a
 * field; wider fan-outs become nested Parallel states.
 */
export const MAX_BRANCHES = 10;

/**
 * The errors Step Functions reports when Lambda itself could not run the task worker (a throttle,
 * a service fault, a network error between the two): retried with backoff, as AWS advises for
 * every Lambda Task state. The worker's own failures (TaskFailure, a bug, its timeout) have other
 * names and are never retried: a task that failed is not run again behind the user's back.
 * Waits: about 2, 4, 8, 16, 32 s (each at most 60 s, full jitter), six attempts in all.
 */
export const LAMBDA_SERVICE_ERRORS = ['Lambda.ServiceException', 'Lambda.AWSLambdaException', 'Lambda.SdkClientException', 'Lambda.TooManyRequestsException'] as const;
export const LAMBDA_RETRY: Retrier = {
  ErrorEquals: [...LAMBDA_SERVICE_ERRORS],
  IntervalSeconds: 2,
  MaxAttempts: 5,
  BackoffRate: 2,
  MaxDelaySeconds: 60,
  JitterStrategy: 'FULL',
};

/** Names of the states compiled from one task. */
export const stateNames = (taskId: string) => ({
  task: taskId,
  check: `${taskId}.check`,
  skipped: `${taskId}.skipped`,
  timeout: `${taskId}.timeout`,
  failed: `${taskId}.failed`,
  outcome: `${taskId}.outcome`,
  end: `${taskId}.end`,
  wait: `${taskId}.wait`,
  waitCheck: `${taskId}.wait.check`,
  waitTimeout: `${taskId}.wait.timeout`,
});

export interface CompileOptions {
  /** Resource of the Task states; the `${TaskWorkerArn}` placeholder by default. */
  taskWorkerArn?: string;
}

/**
 * Compiles a flow version. The flow is validated first (a FlowValidationError lists every
 * problem), so the graph is known to be acyclic and every name well formed.
 */
export function compileFlow(input: FlowDefinition, options: CompileOptions = {}): AslDefinition {
  const flow = parseFlow(input);
  return new Compiler(flow, options.taskWorkerArn ?? TASK_WORKER_PLACEHOLDER).compile();
}

/** Replaces `${Name}` placeholders as CloudFormation's `DefinitionSubstitutions` does. */
export function applySubstitutions(definition: AslDefinition, substitutions: Readonly<Record<string, string>>): AslDefinition {
  const text = JSON.stringify(definition).replace(/\$\{([A-Za-z0-9_]+)\}/g, (whole, key: string) =>
    key in substitutions ? JSON.stringify(substitutions[key]).slice(1, -1) : whole,
  );
  return JSON.parse(text) as AslDefinition;
}

type Node = { kind: 'task'; id: string } | { kind: 'parallel'; branches: Node[][] };
type States = Record<string, AslState>;

class Compiler {
  private readonly tasks: Map<string, FlowTask>;
  private readonly graph: TaskGraph;
  private readonly desc: Map<string, Set<string>>;
  private readonly order: string[];
  private readonly guarded = new Set<string>();

  constructor(
    private readonly flow: FlowDefinition,
    private readonly resource: string,
  ) {
    this.tasks = new Map(flow.tasks.map((t) => [t.id, t]));
    this.graph = buildGraph([...this.tasks.keys()], flow.connections);
    this.desc = descendants(this.graph);
    this.order = topologicalOrder(this.graph);
    // A task may be skipped when every task feeding it is a decision or may itself be skipped.
    for (const id of this.order) {
      const preds = this.preds(id);
      if (preds.length > 0 && preds.every((p) => this.isDecision(p) || this.guarded.has(p))) this.guarded.add(id);
    }
  }

  compile(): AslDefinition {
    const layout = this.structure(new Set(this.order));
    const states: States = {};
    const first = layout.length > 0 ? this.entryName(layout[0]!) : null;
    states[START_STATE] = {
      Type: 'Pass',
      Comment: 'Shapes the execution input { run, variables } into the run document { run, variables, tasks }.',
      Parameters: { 'run.$': '$.run', 'variables.$': '$.variables', tasks: {} },
      ...go(first === null ? null : UPLOAD_STATES.check),
    };
    if (first !== null) Object.assign(states, uploadStates(this.resource, first));
    this.emitSequence(layout, states, null);
    const definition: AslDefinition = {
      Comment: `Flow "${this.flow.name}" (${this.flow.id}), compiled from flow definition format ${this.flow.formatVersion} by statemachines/compile.ts.`,
      StartAt: START_STATE,
      States: states,
    };
    assertNames(definition);
    return definition;
  }

  // ---- Layout: the task graph as nested sequences and parallel groups ----

  /** Lays out a set of tasks closed under "between" (every path between two of them stays inside). */
  private structure(subset: ReadonlySet<string>): Node[] {
    if (subset.size === 0) return [];
    const components = weakComponents(this.graph, subset);
    if (components.length > 1) return [this.parallel(components.map((c) => this.sequence(c)))];
    return this.sequence(components[0]!);
  }

  /**
   * A connected set, in topological order. Splits it at the first point where everything before
   * precedes everything after (so the split adds no wait); when there is none (an "N" shape such
   * as a→c, b→c, b→d), the tasks without predecessors go first, which keeps every dependency
   * but may make a task wait for one it does not depend on.
   */
  private sequence(order: string[]): Node[] {
    if (order.length === 1) return [{ kind: 'task', id: order[0]! }];
    const inside = new Set(order);
    const before = new Map(order.map((id) => [id, 0]));
    for (let k = 1; k < order.length; k++) {
      for (const d of this.desc.get(order[k - 1]!)!) if (inside.has(d)) before.set(d, before.get(d)! + 1);
      if (order.slice(k).every((id) => before.get(id) === k)) {
        return [...this.structure(new Set(order.slice(0, k))), ...this.structure(new Set(order.slice(k)))];
      }
    }
    const sources = order.filter((id) => this.preds(id).every((p) => !inside.has(p)));
    const rest = order.filter((id) => !sources.includes(id));
    return [...this.structure(new Set(sources)), ...this.structure(new Set(rest))];
  }

  private parallel(branches: Node[][]): Node {
    let grouped = branches;
    while (grouped.length > MAX_BRANCHES) {
      const next: Node[][] = [];
      for (let i = 0; i < grouped.length; i += MAX_BRANCHES) {
        const chunk = grouped.slice(i, i + MAX_BRANCHES);
        next.push(chunk.length === 1 ? chunk[0]! : [{ kind: 'parallel', branches: chunk }]);
      }
      grouped = next;
    }
    return { kind: 'parallel', branches: grouped };
  }

  // ---- Emitting states ----

  private emitSequence(sequence: Node[], states: States, next: string | null): void {
    sequence.forEach((node, i) => {
      const after = i + 1 < sequence.length ? this.entryName(sequence[i + 1]!) : next;
      if (node.kind === 'task') this.emitTask(this.tasks.get(node.id)!, states, after);
      else this.emitParallel(node.branches, states, after);
    });
  }

  private entryName(node: Node): string {
    if (node.kind === 'parallel') return parallelName(node.branches.map(firstTask));
    return this.guarded.has(node.id) ? stateNames(node.id).check : node.id;
  }

  private emitParallel(branches: Node[][], states: States, next: string | null): void {
    const heads = branches.map(firstTask);
    let tasks = '$[0].tasks';
    for (let i = 1; i < branches.length; i++) tasks = `States.JsonMerge(${tasks}, $[${i}].tasks, false)`;
    states[parallelName(heads)] = {
      Type: 'Parallel',
      Comment: `Runs the branches starting at ${heads.join(', ')} at the same time; continues when all are done.`,
      Branches: branches.map((branch) => {
        const branchStates: States = {};
        this.emitSequence(branch, branchStates, null);
        return { StartAt: this.entryName(branch[0]!), States: branchStates };
      }),
      // The joined run document replaces the input (the default ResultPath "$", left out because
      // aws-local-stepfunctions 3.0.0 writes an explicit "$" to a key named "$").
      ResultSelector: { 'run.$': '$[0].run', 'variables.$': '$[0].variables', 'tasks.$': tasks },
      ...go(next),
    };
  }

  private emitTask(task: FlowTask, states: States, next: string | null): void {
    const names = stateNames(task.id);
    const spec = TASK_CATALOGUE[task.type];
    const timeout = task.timeoutSeconds;
    const record = `$.tasks.${task.id}`;

    if (this.guarded.has(task.id)) {
      states[names.check] = {
        Type: 'Choice',
        Comment: `Runs ${task.id} when a connection into it is live; otherwise it is skipped.`,
        Choices: [{ ...this.liveRule(task.id), Next: names.task }],
        Default: names.skipped,
      };
    }

    const catches: Catcher[] = [];
    if (timeout !== undefined) catches.push({ ErrorEquals: ['States.Timeout'], ResultPath: '$.error', Next: names.timeout });
    catches.push({ ErrorEquals: ['States.ALL'], ResultPath: '$.error', Next: names.failed });
    const after =
      task.type === 'stopRun' ? names.outcome : task.type === 'wait' ? (timeout !== undefined ? names.waitCheck : names.wait) : next;
    const sources = this.variableSources(task.id);
    const invocation: Record<string, JsonValue> = {
      taskId: task.id,
      type: task.type,
      label: task.label,
      settings: task.settings as Record<string, JsonValue>,
      ...(timeout !== undefined ? { timeoutSeconds: timeout } : {}),
      ...(sources.length > 0 ? { variableSources: sources } : {}),
      'state.$': '$',
    };
    const long = spec.mayRunLong === true && timeout !== undefined && timeout > FUNCTION_TASK_SECONDS;
    const state: TaskState = {
      Type: 'Task',
      Comment: `${spec.title}: ${task.label}${long ? ' (on the worker task: its Timeout is longer than a function runs)' : ''}`,
      ...(long
        ? {
            Resource: WAIT_FOR_UPLOAD_RESOURCE,
            Parameters: { FunctionName: this.resource, Payload: { kind: WORKER_TASK_KIND, 'taskToken.$': '$$.Task.Token', ...invocation } },
            HeartbeatSeconds: WORKER_TASK_HEARTBEAT_SECONDS,
          }
        : { Resource: this.resource, Parameters: invocation }),
      ...(timeout !== undefined ? { TimeoutSeconds: timeout } : {}),
      ResultSelector:
        task.type === 'stopRun'
          ? { taskId: task.id, status: 'aborted', 'output.$': '$' }
          : { status: 'finished', 'output.$': '$' },
      ResultPath: record,
      Retry: [{ ...LAMBDA_RETRY, ErrorEquals: [...LAMBDA_RETRY.ErrorEquals] }],
      Catch: catches,
      ...go(after),
    };
    states[names.task] = state;

    if (task.type === 'wait') {
      // The worker resolves the duration (it may be a ?variable) to `{ "seconds": n }`; the wait
      // itself is a Wait state, so a long wait holds no worker.
      if (timeout !== undefined) {
        states[names.waitCheck] = {
          Type: 'Choice',
          Comment: `A wait longer than the Timeout (${timeout} s) ends as timeout.`,
          Choices: [{ Variable: `${record}.output.seconds`, NumericGreaterThan: timeout, Next: names.waitTimeout }],
          Default: names.wait,
        };
        states[names.waitTimeout] = {
          Type: 'Pass',
          Result: { Error: 'States.Timeout', Cause: `The wait is longer than the task's Timeout of ${timeout} s.` },
          ResultPath: '$.error',
          Next: names.timeout,
        };
      }
      states[names.wait] = { Type: 'Wait', SecondsPath: `${record}.output.seconds`, ...go(next) };
    }

    if (this.guarded.has(task.id)) {
      states[names.skipped] = {
        Type: 'Pass',
        Comment: `Records that ${task.id} was skipped.`,
        Result: { status: 'skipped' },
        ResultPath: record,
        ...go(next),
      };
    }

    if (timeout !== undefined) {
      states[names.timeout] = {
        Type: 'Pass',
        Comment: `Records that ${task.id} ran longer than its Timeout.`,
        Parameters: { taskId: task.id, status: 'timeout', 'error.$': '$.error' },
        ResultPath: record,
        Next: names.outcome,
      };
    }
    states[names.failed] = {
      Type: 'Pass',
      Comment: `Records that ${task.id} went wrong.`,
      Parameters: { taskId: task.id, status: 'failed', 'error.$': '$.error' },
      ResultPath: record,
      Next: names.outcome,
    };
    states[names.outcome] = {
      Type: 'Pass',
      Comment: `Error Flow.<status> and the task record as Cause, for ${names.end}.`,
      Parameters: {
        'Error.$': `States.Format('Flow.{}', ${record}.status)`,
        'Cause.$': `States.JsonToString(${record})`,
      },
      Next: names.end,
    };
    states[names.end] = {
      Type: 'Fail',
      Comment: `Ends the run (failed, timeout or aborted) at ${task.id}.`,
      ErrorPath: '$.Error',
      CausePath: '$.Cause',
    };
  }

  /** "At least one connection into `id` is live": its source finished (and, for a decision, chose `id`). */
  private liveRule(id: string): ChoiceRule {
    const rules: ChoiceRule[] = this.preds(id).map((p) =>
      this.isDecision(p)
        ? {
            And: [
              { Variable: `$.tasks.${p}.output.branch`, IsPresent: true },
              { Variable: `$.tasks.${p}.output.branch`, StringEquals: id },
            ],
          }
        : { Variable: `$.tasks.${p}.status`, StringEquals: 'finished' },
    );
    return rules.length === 1 ? rules[0]! : { Or: rules };
  }

  /** The tasks before `id` that set variables, in dependency order: later ones win (see effectiveVariables). */
  private variableSources(id: string): string[] {
    return this.order.filter((other) => setsVariables(this.tasks.get(other)!) && this.desc.get(other)!.has(id));
  }

  private preds(id: string): string[] {
    return this.graph.preds.get(id)!;
  }

  private isDecision(id: string): boolean {
    return this.tasks.get(id)!.type === 'decision';
  }
}

/** The waiting states, entered only by runs whose execution input says `run.waitForUpload: true`. */
function uploadStates(resource: string, first: string): States {
  return {
    [UPLOAD_STATES.check]: {
      Type: 'Choice',
      Comment: 'Only a data upload hook\'s first run waits for its upload to end.',
      Choices: [{ And: [{ Variable: '$.run.waitForUpload', IsPresent: true }, { Variable: '$.run.waitForUpload', BooleanEquals: true }], Next: UPLOAD_STATES.wait }],
      Default: first,
    },
    [UPLOAD_STATES.wait]: {
      Type: 'Task',
      Comment: 'Waits (task token) until the upload ends; the output holds the graph this run is for.',
      Resource: WAIT_FOR_UPLOAD_RESOURCE,
      Parameters: {
        FunctionName: resource,
        Payload: { kind: WAIT_FOR_UPLOAD_KIND, 'runId.$': '$.run.id', 'taskToken.$': '$$.Task.Token' },
      },
      ResultPath: '$.upload',
      Retry: [{ ...LAMBDA_RETRY, ErrorEquals: [...LAMBDA_RETRY.ErrorEquals] }],
      Catch: [{ ErrorEquals: ['States.ALL'], ResultPath: '$.error', Next: UPLOAD_STATES.none }],
      Next: UPLOAD_STATES.received,
    },
    [UPLOAD_STATES.received]: {
      Type: 'Pass',
      Comment: 'The graph system variables join the run\'s variables.',
      Parameters: { 'run.$': '$.run', 'variables.$': 'States.JsonMerge($.variables, $.upload, false)', 'tasks.$': '$.tasks' },
      Next: first,
    },
    [UPLOAD_STATES.none]: {
      Type: 'Fail',
      Comment: 'The upload added no graph (or failed): the run ends aborted.',
      Error: RUN_END_ERRORS.aborted,
      CausePath: '$.error.Cause',
    },
  };
}

function go(next: string | null): { Next: string } | { End: true } {
  return next === null ? { End: true } : { Next: next };
}

function firstTask(sequence: Node[]): string {
  const head = sequence[0]!;
  return head.kind === 'task' ? head.id : firstTask(head.branches[0]!);
}

/**
 * `parallel a+b+c` after the first task of each branch. Unique: a nested Parallel lies inside one
 * branch of its parent, so the parent's heads include a task outside it. Too long a name keeps
 * its start and ends with a hash of the whole list.
 */
export function parallelName(heads: string[]): string {
  const name = `parallel ${heads.join('+')}`;
  if (name.length <= MAX_STATE_NAME) return name;
  return `${name.slice(0, MAX_STATE_NAME - 9)}~${fnv1a(heads.join('+'))}`;
}

function fnv1a(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(16).padStart(8, '0');
}

/** Every state name, in every branch, is unique and short enough (ASL rules). */
function assertNames(definition: AslDefinition): void {
  const seen = new Set<string>();
  const visit = (machine: AslDefinition) => {
    for (const [name, state] of Object.entries(machine.States)) {
      if (seen.has(name)) throw new Error(`Compiler bug: state name "${name}" is used twice.`);
      if ([...name].length > MAX_STATE_NAME) throw new Error(`Compiler bug: state name "${name}" is longer than ${MAX_STATE_NAME}.`);
      seen.add(name);
      if (state.Type === 'Parallel') state.Branches.forEach(visit);
    }
  };
  visit(definition);
}
