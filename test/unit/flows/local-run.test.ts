/**
 * Compiled flows run by aws-local-stepfunctions (the embedded platform's runner), with every Task
 * state handled by a local function: order, parallelism and joins, decisions and skipped
 * tasks, Stop run, timeouts and failures.
 */
import { describe, expect, it } from 'vitest';
import { evaluateDecision } from '../../../functions/domain/flows/tasks/decision.js';
import type { DecisionSettings, FlowDefinition, WaitSettings } from '../../../functions/domain/flows/blueprints/model.js';
import type { TaskStatus } from '../../../functions/domain/flows/runs/run-status.js';
import { effectiveVariables, substituteReferences } from '../../../functions/domain/flows/blueprints/variables.js';
import type { TaskHandler, TaskInvocation } from '../../../statemachines/local.js';
import { readOutcome } from '../../../statemachines/outcome.js';
import { loadFixture, runLocally } from './helpers.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** What the real worker will do for the control tasks; data tasks just answer `{ ok: true }`. */
function valuesFor(invocation: TaskInvocation): Record<string, string> {
  const { state, variableSources = [] } = invocation;
  return { system_triggererAccountName: 'alice', ...effectiveVariables(state.variables, state.tasks, variableSources) };
}

function worker(overrides: Record<string, (invocation: TaskInvocation) => unknown> = {}): TaskHandler {
  return async (invocation) => {
    const override = overrides[invocation.taskId];
    if (override) return override(invocation);
    const values = valuesFor(invocation);
    switch (invocation.type) {
      case 'decision':
        return { branch: evaluateDecision(invocation.settings as unknown as DecisionSettings, values) };
      case 'setVariables': {
        const set = (invocation.settings as { values: Record<string, string> }).values;
        return { variables: Object.fromEntries(Object.entries(set).map(([k, v]) => [k, substituteReferences(v, values)])) };
      }
      case 'wait':
        return { seconds: Number(substituteReferences(String((invocation.settings as unknown as WaitSettings).seconds), values)) };
      default:
        return { ok: true };
    }
  };
}

async function run(
  flow: FlowDefinition,
  variables: Record<string, string>,
  handler: TaskHandler = worker(),
  waits: Record<string, number> = {},
  options: { validate?: boolean } = {},
) {
  // What the worker would have recorded itself: running while called, finished once returned.
  const known: Record<string, TaskStatus> = {};
  const { result, calls } = await runLocally(
    flow,
    variables,
    async (invocation, name) => {
      known[invocation.taskId] = 'running';
      const output = await handler(invocation, name);
      known[invocation.taskId] = 'finished';
      return output;
    },
    waits,
    options,
  );
  return { result, calls, outcome: readOutcome(flow, result, known) };
}

describe('a local run of a compiled flow', () => {
  it('runs a linear flow in order and finishes', async () => {
    const { result, calls, outcome } = await run(loadFixture('linear'), { sourceUrl: 'https://data.acme.example/x.ttl' });
    expect(calls).toEqual(['load', 'transform', 'validate', 'describe']);
    expect(result.kind).toBe('succeeded');
    expect(outcome).toEqual({
      status: 'finished',
      tasks: { load: 'finished', transform: 'finished', validate: 'finished', describe: 'finished' },
    });
    const output = (result as { output: { variables: unknown; tasks: Record<string, unknown> } }).output;
    expect(output.variables).toEqual({ sourceUrl: 'https://data.acme.example/x.ttl' });
    expect(output.tasks.load).toEqual({ status: 'finished', output: { ok: true } });
  });

  it('gives every task its id, type, label, settings and the run document', async () => {
    const seen: TaskInvocation[] = [];
    await run(loadFixture('linear'), { sourceUrl: 'u' }, async (invocation) => {
      seen.push(structuredClone(invocation));
      return { n: seen.length };
    });
    expect(seen[0]).toMatchObject({ taskId: 'load', type: 'loadFromUrl', label: 'Load the source', settings: { url: '?sourceUrl' } });
    expect(seen[0]!.state).toEqual({ run: { id: 'run-1', flowId: 'nightly-import' }, variables: { sourceUrl: 'u' }, tasks: {} });
    expect(seen[2]!.state.tasks).toEqual({ load: { status: 'finished', output: { n: 1 } }, transform: { status: 'finished', output: { n: 2 } } });
  });

  it('runs parallel branches at the same time, and the join waits for both', async () => {
    const events: string[] = [];
    const timed = (ms: number) => async (invocation: TaskInvocation) => {
      events.push(`start ${invocation.taskId}`);
      await sleep(ms);
      events.push(`end ${invocation.taskId}`);
      return { ok: true };
    };
    const { outcome } = await run(
      loadFixture('fan-out-fan-in'),
      {},
      worker({ load: timed(0), addLabels: timed(80), syncSearch: timed(80), countRows: timed(20), notify: timed(0) }),
    );
    expect(outcome.status).toBe('finished');
    expect(Object.values(outcome.tasks).every((s) => s === 'finished')).toBe(true);
    // Both branches started before either ended: they ran side by side.
    expect(events.indexOf('start countRows')).toBeLessThan(events.indexOf('end addLabels'));
    expect(events.indexOf('end countRows')).toBeLessThan(events.indexOf('end syncSearch'));
    // The join started only after both branches ended.
    expect(events.slice(-2)).toEqual(['start notify', 'end notify']);
    expect(events.indexOf('start notify')).toBeGreaterThan(events.indexOf('end syncSearch'));
    expect(events.indexOf('start notify')).toBeGreaterThan(events.indexOf('end countRows'));
  });

  it('a decision takes the branch its conditions pick; the others are reported skipped', async () => {
    const production = await run(loadFixture('decision'), { environment: 'production' });
    expect(production.calls.sort()).toEqual(['describe', 'publish', 'route', 'syncSparql']);
    expect(production.outcome).toEqual({
      status: 'finished',
      tasks: { route: 'finished', publish: 'finished', syncSparql: 'finished', archive: 'skipped', describe: 'finished' },
    });

    const test = await run(loadFixture('decision'), { environment: 'test' });
    expect(test.calls).toEqual(['route', 'archive', 'describe']);
    // The branch not taken is skipped, and so is the task only it feeds.
    expect(test.outcome.tasks).toEqual({ route: 'finished', publish: 'skipped', syncSparql: 'skipped', archive: 'finished', describe: 'finished' });
    expect(test.outcome.status).toBe('finished');
    const output = (test.result as { output: { tasks: Record<string, unknown> } }).output;
    expect(output.tasks.route).toEqual({ status: 'finished', output: { branch: 'archive' } });
    expect(output.tasks.publish).toEqual({ status: 'skipped' });
  });

  it('a decision with no branch holding and no otherwise skips everything after it', async () => {
    const flow = loadFixture('stop-run');
    const { calls, outcome } = await run(flow, {}, worker({ gate: () => ({ branch: '' }) }));
    expect(calls).toEqual(['prepare', 'gate']);
    expect(outcome.tasks).toEqual({ prepare: 'finished', gate: 'finished', stop: 'skipped', load: 'skipped', report: 'skipped' });
    expect(outcome.status).toBe('finished');
  });

  it('Stop run ends the run as aborted; tasks not reached never started', async () => {
    const reasons: string[] = [];
    const { result, calls, outcome } = await run(
      loadFixture('stop-run'),
      { mode: 'dry-run' },
      worker({
        stop: (invocation) => {
          // Output variables of earlier Set variables tasks reach later tasks.
          reasons.push(substituteReferences(String(invocation.settings.reason), valuesFor(invocation)));
          return {};
        },
      }),
    );
    expect(reasons).toEqual(['Dry run requested by alice.']);
    expect(result).toMatchObject({ kind: 'failed', error: 'Flow.aborted' });
    expect(JSON.parse((result as { cause: string }).cause)).toEqual({ taskId: 'stop', status: 'aborted', output: {} });
    expect(calls).toEqual(['prepare', 'gate', 'stop']);
    expect(outcome.status).toBe('aborted');
    expect(outcome.endedBy?.taskId).toBe('stop');
    expect(outcome.tasks).toMatchObject({ prepare: 'finished', gate: 'finished', stop: 'aborted', report: 'neverStarted' });
    // load sat in the other Parallel branch: it was skipped, or cancelled before its choice.
    expect(['neverStarted', 'skipped']).toContain(outcome.tasks.load);
  });

  it('the same flow without a dry run skips Stop run and finishes', async () => {
    const { calls, outcome } = await run(loadFixture('stop-run'), { mode: 'live' });
    expect(calls.sort()).toEqual(['gate', 'load', 'prepare', 'report']);
    expect(outcome).toEqual({
      status: 'finished',
      tasks: { prepare: 'finished', gate: 'finished', stop: 'skipped', load: 'finished', report: 'finished' },
    });
  });

  it('a task with a 1 s Timeout that takes 2 s ends the run as timeout', async () => {
    const started = Date.now();
    const { result, calls, outcome } = await run(
      loadFixture('timeouts'),
      { delay: '5' },
      worker({ ping: () => sleep(2_000).then(() => ({ ok: true })) }),
      { 'pause.wait': 0 }, // the Wait state, by name: do not really wait 5 s
    );
    expect(Date.now() - started).toBeGreaterThanOrEqual(900); // the Timeout, not at once
    expect(calls).toEqual(['pause', 'ping']);
    expect(result).toMatchObject({ kind: 'failed', error: 'Flow.timeout' });
    expect(JSON.parse((result as { cause: string }).cause)).toMatchObject({ taskId: 'ping', status: 'timeout', error: { Error: 'States.Timeout' } });
    expect(outcome).toMatchObject({ status: 'timeout', tasks: { pause: 'finished', ping: 'timeout', done: 'neverStarted' } });
  });

  it('a Wait task waits the resolved seconds, and a wait beyond its Timeout ends as timeout', async () => {
    const started = Date.now();
    const ok = await run(loadFixture('timeouts'), { delay: '1' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    expect(ok.outcome.status).toBe('finished');

    const tooLong = await run(loadFixture('timeouts'), { delay: '601' });
    expect(tooLong.calls).toEqual(['pause']);
    expect(tooLong.result).toMatchObject({ kind: 'failed', error: 'Flow.timeout' });
    expect(tooLong.outcome.endedBy).toMatchObject({ taskId: 'pause', status: 'timeout' });
  });

  it('a throwing task ends the run as failed, with its error', async () => {
    const { result, calls, outcome } = await run(
      loadFixture('linear'),
      { sourceUrl: 'u' },
      worker({
        transform: () => {
          throw new Error('The SPARQL endpoint answered 503.');
        },
      }),
    );
    expect(calls).toEqual(['load', 'transform']);
    expect(result).toMatchObject({ kind: 'failed', error: 'Flow.failed' });
    expect(JSON.parse((result as { cause: string }).cause)).toEqual({
      taskId: 'transform',
      status: 'failed',
      error: { Error: 'Error', Cause: 'The SPARQL endpoint answered 503.' },
    });
    expect(outcome.status).toBe('failed');
    expect(outcome.tasks).toEqual({ load: 'finished', transform: 'failed', validate: 'neverStarted', describe: 'neverStarted' });
  });

  it("Lambda's own errors (throttle, service fault) are retried and the run goes on; the task's own failure is not", async () => {
    const lambdaError = (name: string) => Object.assign(new Error(`${name} from Lambda`), { name });
    const thrown = ['Lambda.TooManyRequestsException', 'Lambda.ServiceException', 'Lambda.AWSLambdaException', 'Lambda.SdkClientException'];
    let attempts = 0;
    const retried = await run(
      loadFixture('linear'),
      { sourceUrl: 'u' },
      worker({
        transform: () => {
          const error = thrown[attempts++];
          if (error) throw lambdaError(error);
          return { ok: true };
        },
      }),
    );
    expect(retried.calls).toEqual(['load', 'transform', 'transform', 'transform', 'transform', 'transform', 'validate', 'describe']);
    expect(retried.result.kind).toBe('succeeded');
    expect(retried.outcome.status).toBe('finished');

    // Retries are bounded: a worker throttled every time ends the run failed after six attempts.
    const throttled = await run(loadFixture('linear'), { sourceUrl: 'u' }, worker({ transform: () => { throw lambdaError('Lambda.TooManyRequestsException'); } }));
    expect(throttled.calls.filter((c) => c === 'transform')).toHaveLength(6);
    expect(throttled.result).toMatchObject({ kind: 'failed', error: 'Flow.failed' });

    // The worker's own failure (TaskFailure, or any other error) runs once.
    const failure = Object.assign(new Error('The SPARQL endpoint answered 503.'), { name: 'TaskFailure' });
    const failed = await run(loadFixture('linear'), { sourceUrl: 'u' }, worker({ transform: () => { throw failure; } }));
    expect(failed.calls).toEqual(['load', 'transform']);
    expect(failed.result).toMatchObject({ kind: 'failed', error: 'Flow.failed' });
  });

  it('a failure inside a Parallel branch ends the whole run', async () => {
    const { result, outcome } = await run(
      loadFixture('fan-out-fan-in'),
      {},
      worker({
        countRows: () => Promise.reject(new Error('boom')),
        addLabels: () => sleep(50).then(() => ({ ok: true })),
      }),
    );
    expect(result).toMatchObject({ kind: 'failed', error: 'Flow.failed' });
    expect(outcome.endedBy?.taskId).toBe('countRows');
    // addLabels was still running in the other branch: cancelled with the run.
    expect(outcome.tasks).toEqual({ load: 'finished', addLabels: 'aborted', syncSearch: 'neverStarted', countRows: 'failed', notify: 'neverStarted' });
    expect(outcome.status).toBe('failed');
  });

  it('runs the full example down the production branch', async () => {
    const flow = loadFixture('full-example');
    const { calls, outcome } = await run(
      flow,
      { environment: 'production', exportUrl: 'https://collection.museum.example/export.xml' },
      worker(),
      { 'cooldown.wait': 0 },
    );
    expect(outcome.status).toBe('finished');
    expect(outcome.tasks).toMatchObject({ tooManyErrors: 'skipped', report: 'skipped', publish: 'finished', describe: 'finished' });
    expect(calls.indexOf('cooldown')).toBeLessThan(calls.indexOf('pingPortal'));
    expect(calls).not.toContain('report');
  });
});

describe('every dependency holds, whatever the shape', () => {
  /** Deterministic pseudo-random numbers (mulberry32). */
  function random(seed: number) {
    let a = seed;
    return () => {
      a = (a + 0x6d2b79f5) | 0;
      let t = Math.imul(a ^ (a >>> 15), 1 | a);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
  }

  function randomFlow(seed: number): FlowDefinition {
    const next = random(seed);
    const n = 2 + Math.floor(next() * 10);
    const ids = Array.from({ length: n }, (_, i) => `t${i}`);
    const connections: { from: string; to: string }[] = [];
    for (let j = 1; j < n; j++) for (let i = 0; i < j; i++) if (next() < 0.3) connections.push({ from: ids[i]!, to: ids[j]! });
    return {
      formatVersion: 1,
      id: `random-${seed}`,
      name: `Random ${seed}`,
      description: '',
      accessLevel: 'Private',
      tasks: ids.map((id) => ({ id, label: id, type: 'setDescription', settings: { description: id } })),
      connections,
      variables: [],
      outputVariables: [],
      maskedValues: [],
      presets: [],
    };
  }

  it('in 100 random task graphs every task runs once, after every task feeding it', async () => {
    for (let seed = 1; seed <= 100; seed++) {
      const flow = randomFlow(seed);
      const ended = new Set<string>();
      const violations: string[] = [];
      const { calls, outcome } = await run(flow, {}, async (invocation) => {
        for (const c of flow.connections) {
          if (c.to === invocation.taskId && !ended.has(c.from)) violations.push(`${c.from} → ${c.to}`);
        }
        await sleep((invocation.taskId.charCodeAt(1) * 7) % 4);
        ended.add(invocation.taskId);
        return {};
      }, {}, { validate: false }); // asl-validator runs on compiled output elsewhere; this is about order
      expect(violations, `seed ${seed}`).toEqual([]);
      expect([...calls].sort(), `seed ${seed}`).toEqual(flow.tasks.map((t) => t.id).sort());
      expect(outcome.status).toBe('finished');
    }
  });
});
