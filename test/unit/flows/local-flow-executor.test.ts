/**
 * The embedded FlowExecutor's task-token wait (a data upload hook's `upload.wait`), as the domain
 * drives it on both runtimes: the worker is told the token, the state is held until `release`
 * with that token, and the run goes on with the released output or ends with the released error.
 * A token nothing waits for (unknown, or already released) is ignored.
 */
import './polyfill-node20.js';
import { describe, expect, it, vi } from 'vitest';
import { LocalFlowExecutor } from '../../../functions/adapters/local/local-flow-executor.js';
import type { ExecutionInput, UploadWaitInvocation } from '../../../functions/ports/flow-executor.js';
import { compileFlow } from '../../../statemachines/compile.js';
import type { TaskInvocation } from '../../../statemachines/local.js';
import type { ExecutionResult } from '../../../statemachines/outcome.js';
import { loadFixture } from './helpers.js';

async function startWaitingRun(runId: string) {
  const executor = new LocalFlowExecutor();
  const tokens: string[] = [];
  const variablesSeen: Record<string, string>[] = [];
  let settle!: (result: ExecutionResult) => void;
  const settled = new Promise<ExecutionResult>((resolve) => (settle = resolve));
  executor.bind({
    async runTask(invocation: TaskInvocation | UploadWaitInvocation) {
      // The worker's part of the wait: it is told the token (the domain records it on the run).
      if ('Payload' in invocation) {
        tokens.push(invocation.Payload.taskToken);
        return {};
      }
      variablesSeen.push((invocation as TaskInvocation).state.variables);
      return {};
    },
    async settle(_runId, result) {
      settle(result);
    },
  });
  const flow = loadFixture('linear');
  const definition = compileFlow(flow);
  const executable = await executor.prepare({ blueprintUid: 'b1', version: 1 });
  const input: ExecutionInput = { run: { id: runId, blueprintId: 'b1', flowId: flow.id, version: 1, startedBy: 'u1', waitForUpload: true }, variables: { sourceUrl: 'https://x.example/a.ttl' } };
  await executor.start(executable, definition, runId, input);
  await vi.waitFor(() => expect(tokens).toHaveLength(1));
  return { executor, token: tokens[0]!, variablesSeen, settled };
}

describe('the embedded executor holds a task-token wait until it is released', () => {
  it('goes on with the released output; other and used tokens are ignored', async () => {
    const { executor, token, variablesSeen, settled } = await startWaitingRun('run-1');
    await expect(executor.release('not-a-token', { output: { system_uploadedGraphIRI: 'https://x.example/wrong' } })).resolves.toBeUndefined();
    expect(variablesSeen).toEqual([]);
    await executor.release(token, { output: { system_uploadedGraphIRI: 'https://x.example/g1' } });
    expect((await settled).kind).toBe('succeeded');
    expect(variablesSeen.length).toBeGreaterThan(0);
    expect(variablesSeen.every((v) => v.system_uploadedGraphIRI === 'https://x.example/g1')).toBe(true);
    await expect(executor.release(token, { error: 'Flow.aborted', cause: 'too late' })).resolves.toBeUndefined();
  });

  it('ends the run with the released error, before any task', async () => {
    const { executor, token, variablesSeen, settled } = await startWaitingRun('run-2');
    await executor.release(token, { error: 'Flow.aborted', cause: 'The upload added no graph.' });
    expect(await settled).toMatchObject({ kind: 'failed', error: 'Flow.aborted', cause: 'The upload added no graph.' });
    expect(variablesSeen).toEqual([]);
  });
});
