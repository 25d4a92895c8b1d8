/**
 * The flow → ASL compiler: snapshots of the compiled fixtures (reviewable JSON next to them),
 * asl-validator on every output with the substitution applied, and the structural promises.
 */
import { describe, expect, it } from 'vitest';
import type { FlowDefinition } from '../../../functions/domain/flows/blueprints/model.js';
import { FlowValidationError } from '../../../functions/domain/flows/blueprints/problems.js';
import type { AslDefinition, AslState } from '../../../statemachines/asl.js';
import {
  compileFlow,
  FUNCTION_TASK_SECONDS,
  LAMBDA_SERVICE_ERRORS,
  MAX_BRANCHES,
  MAX_STATE_NAME,
  parallelName,
  TASK_WORKER_PLACEHOLDER,
  UPLOAD_STATES,
  WAIT_FOR_UPLOAD_RESOURCE,
  START_STATE,
  WORKER_TASK_HEARTBEAT_SECONDS,
  WORKER_TASK_KIND,
} from '../../../statemachines/compile.js';
import { taskStates } from '../../../statemachines/local.js';
import { deployable, fixtureNames, loadFixture, TASK_WORKER_ARN, validateAsl } from './helpers.js';

/** A long task's state: it hands the task to the worker task (WORKER_TASK_KIND). */
const onWorkerTask = (state: AslState): boolean =>
  state.Type === 'Task' && (state.Parameters.Payload as { kind?: unknown } | undefined)?.kind === WORKER_TASK_KIND;

/** Every state, in every branch, with its name. */
function allStates(definition: AslDefinition): [string, AslState][] {
  const out: [string, AslState][] = [];
  const visit = (m: AslDefinition) => {
    for (const entry of Object.entries(m.States)) {
      out.push(entry);
      if (entry[1].Type === 'Parallel') entry[1].Branches.forEach(visit);
    }
  };
  visit(definition);
  return out;
}

/** A flow of `setDescription` tasks over the given connections. */
function graphFlow(ids: string[], edges: [string, string][], extra: Partial<FlowDefinition> = {}): FlowDefinition {
  return {
    formatVersion: 1,
    id: 'graph',
    name: 'Graph',
    description: '',
    accessLevel: 'Private',
    tasks: ids.map((id) => ({ id, label: id.slice(0, 40), type: 'setDescription', settings: { description: id } })),
    connections: edges.map(([from, to]) => ({ from, to })),
    variables: [],
    outputVariables: [],
    maskedValues: [],
    presets: [],
    ...extra,
  };
}

describe('compiled fixtures', () => {
  it.each(fixtureNames())('%s matches its snapshot', async (name) => {
    const asl = compileFlow(loadFixture(name));
    await expect(`${JSON.stringify(asl, null, 2)}\n`).toMatchFileSnapshot(`../../fixtures/flows/compiled/${name}.asl.json`);
  });

  it.each(fixtureNames())('%s passes asl-validator once ${TaskWorkerArn} is substituted', (name) => {
    const asl = deployable(loadFixture(name));
    const result = validateAsl(asl);
    expect(result.errors).toEqual([]);
    expect(result.isValid).toBe(true);
    expect(JSON.stringify(asl)).not.toContain('${');
    for (const [name, state] of taskStates(asl)) {
      const task = state as { Resource: string; Parameters: { FunctionName?: string } };
      if (name === UPLOAD_STATES.wait || onWorkerTask(state)) {
        expect(task.Resource).toBe(WAIT_FOR_UPLOAD_RESOURCE);
        expect(task.Parameters.FunctionName).toBe(TASK_WORKER_ARN);
      } else expect(task.Resource).toBe(TASK_WORKER_ARN);
    }
  });

  it('asl-validator does catch a broken definition (the check above is not vacuous)', () => {
    const asl = deployable(loadFixture('linear'));
    (asl.States.load as { Next?: string }).Next = 'nowhere';
    expect(validateAsl(asl).isValid).toBe(false);
  });

  it.each(fixtureNames())('%s: one Task state per task, named by its id, with Timeout and Catch', (name) => {
    const flow = loadFixture(name);
    const asl = compileFlow(flow);
    const tasks = taskStates(asl).filter(([n]) => n !== UPLOAD_STATES.wait);
    expect(tasks.map(([n]) => n).sort()).toEqual(flow.tasks.map((t) => t.id).sort());
    for (const [stateName, state] of tasks) {
      if (state.Type !== 'Task') throw new Error('not a task');
      const task = flow.tasks.find((t) => t.id === stateName)!;
      if (onWorkerTask(state)) {
        // A long task: the same invocation, through the task-token integration (see the long-task tests).
        expect(state.Resource).toBe(WAIT_FOR_UPLOAD_RESOURCE);
        expect(state.Parameters.FunctionName).toBe(TASK_WORKER_PLACEHOLDER);
        expect(state.Parameters.Payload).toMatchObject({ taskId: task.id, type: task.type, label: task.label, settings: task.settings, 'state.$': '$' });
      } else {
        expect(state.Resource).toBe(TASK_WORKER_PLACEHOLDER);
        expect(state.Parameters).toMatchObject({ taskId: task.id, type: task.type, label: task.label, settings: task.settings, 'state.$': '$' });
      }
      expect(state.TimeoutSeconds).toBe(task.timeoutSeconds);
      expect(state.Catch!.map((c) => c.ErrorEquals[0])).toEqual(
        task.timeoutSeconds ? ['States.Timeout', 'States.ALL'] : ['States.ALL'],
      );
      expect(state.Catch!.map((c) => c.Next)).toEqual(task.timeoutSeconds ? [`${task.id}.timeout`, `${task.id}.failed`] : [`${task.id}.failed`]);
    }
  });

  it.each(fixtureNames())("%s: every Task state retries Lambda's own errors with backoff, and nothing else", (name) => {
    for (const [, state] of taskStates(compileFlow(loadFixture(name)))) {
      if (state.Type !== 'Task') throw new Error('not a task');
      expect(state.Retry).toHaveLength(1);
      const [retrier] = state.Retry!;
      expect([...retrier!.ErrorEquals].sort()).toEqual([...LAMBDA_SERVICE_ERRORS].sort());
      expect(retrier!.ErrorEquals.some((e) => e.startsWith('States.'))).toBe(false);
      expect(retrier!.BackoffRate).toBeGreaterThan(1);
      expect(retrier!.MaxAttempts).toBeGreaterThan(0);
      expect(retrier!.MaxAttempts).toBeLessThanOrEqual(10);
    }
  });

  it.each(fixtureNames())('%s: state names are unique and at most 80 characters; no JSONata or Assign; task-token waits only for the upload and long tasks', (name) => {
    const asl = compileFlow(loadFixture(name));
    const names = allStates(asl).map(([n]) => n);
    expect(new Set(names).size).toBe(names.length);
    for (const n of names) expect([...n].length).toBeLessThanOrEqual(MAX_STATE_NAME);
    const text = JSON.stringify(asl);
    for (const banned of ['QueryLanguage', 'Assign', 'JSONata', '{%']) {
      expect(text).not.toContain(banned);
    }
    // A data upload hook's wait uses a task token (only runs that ask for it enter it), and so
    // does each long task (handed to the worker task).
    const longTasks = allStates(asl).filter(([, s]) => onWorkerTask(s)).length;
    expect(text.split('waitForTaskToken').length - 1).toBe(1 + longTasks);
    expect(asl.States[START_STATE]).toMatchObject({ Next: UPLOAD_STATES.check });
    expect(asl.States[UPLOAD_STATES.none]).toMatchObject({ Type: 'Fail', Error: 'Flow.aborted' });
  });
});

describe('compiler behaviour', () => {
  it('is deterministic: the order of tasks and connections in the definition does not matter', () => {
    const flow = loadFixture('full-example');
    const shuffled = { ...flow, tasks: [...flow.tasks].reverse(), connections: [...flow.connections].reverse() };
    expect(JSON.stringify(compileFlow(shuffled))).toBe(JSON.stringify(compileFlow(flow)));
    expect(JSON.stringify(compileFlow(flow))).toBe(JSON.stringify(compileFlow(loadFixture('full-example'))));
  });

  it('refuses an invalid flow with the full list of problems', () => {
    const flow = graphFlow(['a', 'b'], [['a', 'b'], ['b', 'a']]);
    expect(() => compileFlow(flow)).toThrow(FlowValidationError);
  });

  it('compiles an empty flow to a run that only shapes the document', () => {
    const asl = compileFlow(graphFlow([], []));
    expect(asl.StartAt).toBe('start run');
    expect(Object.keys(asl.States)).toEqual(['start run']);
    expect(asl.States['start run']).toMatchObject({ Type: 'Pass', End: true });
  });

  it('fan-out runs in a Parallel state and the fan-in task comes after it', () => {
    const asl = compileFlow(loadFixture('fan-out-fan-in'));
    expect(Object.keys(asl.States).filter((n) => !n.includes('.'))).toEqual(['start run', 'load', 'parallel addLabels+countRows', 'notify']);
    const parallel = asl.States['parallel addLabels+countRows'];
    if (parallel?.Type !== 'Parallel') throw new Error('no parallel');
    expect(parallel.Next).toBe('notify');
    expect(parallel.Branches.map((b) => b.StartAt)).toEqual(['addLabels', 'countRows']);
    expect(parallel.Branches[0]!.States.addLabels).toMatchObject({ Next: 'syncSearch' });
    expect(parallel.ResultSelector).toEqual({
      'run.$': '$[0].run',
      'variables.$': '$[0].variables',
      'tasks.$': 'States.JsonMerge($[0].tasks, $[1].tasks, false)',
    });
  });

  it('a decision guards the tasks after it with Choice states that skip or run', () => {
    const asl = compileFlow(loadFixture('decision'));
    const parallel = asl.States['parallel archive+publish'];
    if (parallel?.Type !== 'Parallel') throw new Error('no parallel');
    expect(parallel.Branches[1]!.States['publish.check']).toEqual({
      Type: 'Choice',
      Comment: 'Runs publish when a connection into it is live; otherwise it is skipped.',
      Choices: [
        {
          And: [
            { Variable: '$.tasks.route.output.branch', IsPresent: true },
            { Variable: '$.tasks.route.output.branch', StringEquals: 'publish' },
          ],
          Next: 'publish',
        },
      ],
      Default: 'publish.skipped',
    });
    // Downstream of a skippable task: skipped unless the task before it finished.
    expect(parallel.Branches[1]!.States['syncSparql.check']).toMatchObject({
      Choices: [{ Variable: '$.tasks.publish.status', StringEquals: 'finished', Next: 'syncSparql' }],
    });
    // The join after the branches runs when either branch ran.
    expect(asl.States['describe.check']).toMatchObject({
      Choices: [
        {
          Or: [
            { Variable: '$.tasks.archive.status', StringEquals: 'finished' },
            { Variable: '$.tasks.syncSparql.status', StringEquals: 'finished' },
          ],
          Next: 'describe',
        },
      ],
      Default: 'describe.skipped',
    });
    expect(asl.States['describe.skipped']).toEqual({
      Type: 'Pass',
      Comment: 'Records that describe was skipped.',
      Result: { status: 'skipped' },
      ResultPath: '$.tasks.describe',
      End: true,
    });
  });

  it('Stop run records aborted and ends the run with Flow.aborted', () => {
    const asl = compileFlow(loadFixture('stop-run'));
    const parallel = asl.States['parallel load+stop'];
    if (parallel?.Type !== 'Parallel') throw new Error('no parallel');
    const states = parallel.Branches[1]!.States;
    expect(states.stop).toMatchObject({ ResultSelector: { taskId: 'stop', status: 'aborted', 'output.$': '$' }, Next: 'stop.outcome' });
    expect(states['stop.outcome']).toMatchObject({ Parameters: { 'Error.$': "States.Format('Flow.{}', $.tasks.stop.status)" }, Next: 'stop.end' });
    expect(states['stop.end']).toMatchObject({ Type: 'Fail', ErrorPath: '$.Error', CausePath: '$.Cause' });
  });

  it('a task with a Timeout gets TimeoutSeconds and a timeout record; a Wait task a Wait state', () => {
    const asl = compileFlow(loadFixture('timeouts'));
    expect(asl.States.ping).toMatchObject({ TimeoutSeconds: 1, Next: 'done' });
    expect(asl.States['ping.timeout']).toMatchObject({
      Parameters: { taskId: 'ping', status: 'timeout', 'error.$': '$.error' },
      ResultPath: '$.tasks.ping',
      Next: 'ping.outcome',
    });
    expect(asl.States.pause).toMatchObject({ Next: 'pause.wait.check' });
    expect(asl.States['pause.wait']).toEqual({ Type: 'Wait', SecondsPath: '$.tasks.pause.output.seconds', Next: 'ping' });
  });

  it(`a task of a type that may run long, with a Timeout over ${FUNCTION_TASK_SECONDS} s, hands itself to the worker task through a task-token wait with heartbeats; shorter or other tasks stay on the function`, () => {
    const flow = graphFlow(['a'], []);
    const task = (id: string, type: string, settings: Record<string, unknown>, timeoutSeconds?: number) => ({ id, label: id, type, settings, ...(timeoutSeconds ? { timeoutSeconds } : {}) });
    const load = { url: 'https://example.org/big.nt.gz', dataset: { account: 'a', dataset: 'd' } };
    const definition: FlowDefinition = {
      ...flow,
      tasks: [
        task('long', 'loadFromUrl', load, FUNCTION_TASK_SECONDS + 1),
        task('edge', 'loadFromUrl', load, FUNCTION_TASK_SECONDS),
        task('untimed', 'loadFromUrl', load),
        task('nap', 'wait', { seconds: 10 }, 86_400),
      ] as FlowDefinition['tasks'],
      connections: [
        { from: 'long', to: 'edge' },
        { from: 'edge', to: 'untimed' },
        { from: 'untimed', to: 'nap' },
      ],
    };
    const asl = compileFlow(definition);
    expect(asl.States.long).toMatchObject({
      Type: 'Task',
      Resource: WAIT_FOR_UPLOAD_RESOURCE,
      Parameters: {
        FunctionName: TASK_WORKER_PLACEHOLDER,
        Payload: { kind: WORKER_TASK_KIND, 'taskToken.$': '$$.Task.Token', taskId: 'long', type: 'loadFromUrl', settings: load, timeoutSeconds: FUNCTION_TASK_SECONDS + 1, 'state.$': '$' },
      },
      TimeoutSeconds: FUNCTION_TASK_SECONDS + 1,
      HeartbeatSeconds: WORKER_TASK_HEARTBEAT_SECONDS,
      ResultPath: '$.tasks.long',
      Next: 'edge',
    });
    // Its outcome is read as any task's: the same record, timeout and failure states.
    expect((asl.States.long as { Catch: { Next: string }[] }).Catch.map((c) => c.Next)).toEqual(['long.timeout', 'long.failed']);
    for (const name of ['edge', 'untimed', 'nap']) {
      const state = asl.States[name] as { Resource: string; HeartbeatSeconds?: number };
      expect(state.Resource, name).toBe(TASK_WORKER_PLACEHOLDER);
      expect(state.HeartbeatSeconds, name).toBeUndefined();
    }
    expect(validateAsl(deployable(definition)).errors).toEqual([]);
  });

  it('passes each task the Set variables tasks before it, in dependency order', () => {
    const asl = compileFlow(loadFixture('full-example'));
    // `map` runs long (on the worker task): its invocation is the integration's Payload.
    const map = taskStates(asl).find(([n]) => n === 'map')![1] as unknown as { Parameters: { Payload: Record<string, unknown> } };
    expect(map.Parameters.Payload.variableSources).toEqual(['pickTarget']);
    const load = taskStates(asl).find(([n]) => n === 'load')![1] as { Parameters: Record<string, unknown> };
    expect(load.Parameters.variableSources).toBeUndefined();
  });

  it('a diamond with a longer side waits only where the connections say', () => {
    // a → b → b2 → d, a → c → d: c runs beside b and b2, d after both.
    const asl = compileFlow(graphFlow(['a', 'b', 'b2', 'c', 'd'], [['a', 'b'], ['b', 'b2'], ['b2', 'd'], ['a', 'c'], ['c', 'd']]));
    expect(Object.keys(asl.States).filter((n) => !n.includes('.'))).toEqual(['start run', 'a', 'parallel b+c', 'd']);
    const parallel = asl.States['parallel b+c'] as { Branches: AslDefinition[] };
    expect(parallel.Branches.map((b) => Object.keys(b.States).filter((n) => !n.includes('.')))).toEqual([['b', 'b2'], ['c']]);
  });

  it('a wide fan-out is split into nested Parallel states of at most 10 branches (10 nested intrinsics)', () => {
    const leaves = Array.from({ length: 23 }, (_, i) => `leaf${String(i).padStart(2, '0')}`);
    const flow = graphFlow(['root', ...leaves], leaves.map((l) => ['root', l] as [string, string]));
    const asl = compileFlow(flow);
    const parallels = allStates(asl).filter(([, s]) => s.Type === 'Parallel') as [string, { Branches: AslDefinition[]; ResultSelector: Record<string, string> }][];
    for (const [, p] of parallels) {
      expect(p.Branches.length).toBeLessThanOrEqual(MAX_BRANCHES);
      expect(p.ResultSelector['tasks.$']!.match(/States\./g)!.length).toBeLessThanOrEqual(10);
    }
    expect(parallels.map(([n]) => n)).toEqual([
      'parallel leaf00+leaf10+leaf20',
      'parallel leaf00+leaf01+leaf02+leaf03+leaf04+leaf05+leaf06+leaf07+leaf08+leaf09',
      'parallel leaf10+leaf11+leaf12+leaf13+leaf14+leaf15+leaf16+leaf17+leaf18+leaf19',
      'parallel leaf20+leaf21+leaf22',
    ]);
    expect(validateAsl(deployable(flow)).isValid).toBe(true);
  });

  it('long task ids still give names within 80 characters, unique', () => {
    const long = (c: string) => c.repeat(64);
    const flow = graphFlow([long('a'), long('b'), long('c'), 'root'], [['root', long('a')], ['root', long('b')], ['root', long('c')]]);
    flow.tasks[0]!.timeoutSeconds = 5;
    const asl = compileFlow(flow);
    const names = allStates(asl).map(([n]) => n);
    for (const n of names) expect(n.length).toBeLessThanOrEqual(MAX_STATE_NAME);
    expect(names).toContain(`${long('a')}.timeout`);
    expect(validateAsl(deployable(flow)).isValid).toBe(true);
    expect(parallelName([long('a'), long('b')])).toMatch(/^parallel a+~[0-9a-f]{8}$/);
    expect(parallelName([long('a'), long('b')])).not.toBe(parallelName([long('a'), long('c')]));
  });
});
