/** Run status from task statuses (spec severity order), and reading an execution back. */
import { describe, expect, it } from 'vitest';
import { RUN_STATUS_SEVERITY, runStatus, type TaskStatus } from '../../../functions/domain/flows/runs/run-status.js';
import { readOutcome } from '../../../statemachines/outcome.js';

describe('runStatus', () => {
  it('is the most severe status: failed > timeout > aborted > running > pending > waiting > finished', () => {
    expect(RUN_STATUS_SEVERITY).toEqual(['failed', 'timeout', 'aborted', 'running', 'pending', 'waiting', 'finished']);
    for (let i = 0; i < RUN_STATUS_SEVERITY.length; i++) {
      for (let j = i; j < RUN_STATUS_SEVERITY.length; j++) {
        const [a, b] = [RUN_STATUS_SEVERITY[i]!, RUN_STATUS_SEVERITY[j]!];
        if (a === 'pending' && b === 'finished') continue; // the rule below
        expect(runStatus([b, a]), `${a} vs ${b}`).toBe(a);
        expect(runStatus([a, b, 'finished']), `${a} vs ${b} with finished`).toBe(a === 'pending' ? 'running' : a);
      }
    }
  });

  it('skipped and never-started tasks do not count', () => {
    expect(runStatus(['finished', 'skipped', 'neverStarted'])).toBe('finished');
    expect(runStatus(['skipped', 'skipped'])).toBe('finished');
    expect(runStatus(['aborted', 'neverStarted', 'skipped'])).toBe('aborted');
    expect(runStatus(['waiting', 'skipped'])).toBe('waiting');
  });

  it('some finished while others are yet to start is running', () => {
    expect(runStatus(['finished', 'pending'])).toBe('running');
    expect(runStatus(['pending', 'pending'])).toBe('pending');
    expect(runStatus(['finished', 'pending', 'failed'])).toBe('failed');
    expect(runStatus(['finished', 'pending', 'timeout'])).toBe('timeout');
  });

  it('a run without counted tasks is finished; a fresh run is pending', () => {
    expect(runStatus([])).toBe('finished');
    expect(runStatus(['pending'])).toBe('pending');
    expect(runStatus(new Set<TaskStatus>(['running', 'finished']))).toBe('running');
  });
});

describe('readOutcome', () => {
  const flow = { tasks: ['a', 'b', 'c'].map((id) => ({ id, label: id, type: 'wait' as const, settings: {} })) };

  it('reads a succeeded execution from the run document; tasks without a record never started', () => {
    const output = { run: {}, variables: {}, tasks: { a: { status: 'finished', output: {} }, b: { status: 'skipped' } } };
    expect(readOutcome(flow, { kind: 'succeeded', output })).toEqual({
      status: 'finished',
      tasks: { a: 'finished', b: 'skipped', c: 'neverStarted' },
    });
  });

  it('reads the task that ended the run from Error and Cause; running tasks were cancelled', () => {
    const cause = JSON.stringify({ taskId: 'b', status: 'timeout', error: { Error: 'States.Timeout' } });
    expect(readOutcome(flow, { kind: 'failed', error: 'Flow.timeout', cause }, { a: 'finished', b: 'running', c: 'running' })).toEqual({
      status: 'timeout',
      tasks: { a: 'finished', b: 'timeout', c: 'aborted' },
      endedBy: { taskId: 'b', status: 'timeout', record: { taskId: 'b', status: 'timeout', error: { Error: 'States.Timeout' } } },
    });
  });

  it('reads the task id even from a Cause the local runner left as broken JSON', () => {
    const cause = '{"taskId":"c","status":"failed","error":{"Error":"Error","Cause":"said "no""}}';
    expect(readOutcome(flow, { kind: 'failed', error: 'Flow.failed', cause }).endedBy?.taskId).toBe('c');
  });

  it('an abort from the run page makes the run aborted and running tasks aborted', () => {
    expect(readOutcome(flow, { kind: 'aborted' }, { a: 'finished', b: 'running' })).toEqual({
      status: 'aborted',
      tasks: { a: 'finished', b: 'aborted', c: 'neverStarted' },
    });
  });

  it('any other error is a failed run that keeps the error', () => {
    expect(readOutcome(flow, { kind: 'failed', error: 'States.Runtime', cause: 'bad path' })).toEqual({
      status: 'failed',
      tasks: { a: 'neverStarted', b: 'neverStarted', c: 'neverStarted' },
      error: { error: 'States.Runtime', cause: 'bad path' },
    });
  });

  it('reads an abort before any task (a data upload whose upload added no graph) as aborted, with the reason', () => {
    const flow = { tasks: [{ id: 'a' }, { id: 'b' }] } as never;
    expect(readOutcome(flow, { kind: 'failed', error: 'Flow.aborted', cause: 'The upload added no graph.' })).toEqual({
      status: 'aborted',
      tasks: { a: 'neverStarted', b: 'neverStarted' },
      error: { error: 'Flow.aborted', cause: 'The upload added no graph.' },
    });
  });
});
