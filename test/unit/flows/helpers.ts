/** Shared by the flow tests: fixtures, asl-validator, and a local run of a compiled flow. */
import './polyfill-node20.js';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { ExecutionError, StateMachine } from 'aws-local-stepfunctions';
import type { FlowDefinition } from '../../../functions/domain/flows/blueprints/model.js';
import type { AslDefinition } from '../../../statemachines/asl.js';
import { applySubstitutions, compileFlow, TASK_WORKER_SUBSTITUTION } from '../../../statemachines/compile.js';
import { forLocalRun, localTaskHandlers, taskStates, type TaskHandler } from '../../../statemachines/local.js';
import type { ExecutionResult } from '../../../statemachines/outcome.js';

export const FIXTURES = fileURLToPath(new URL('../../fixtures/flows/', import.meta.url));
export const TASK_WORKER_ARN = 'arn:aws:lambda:eu-west-1:123456789012:function:flow-task-worker';

/** The flow fixtures, by file name without `.json`. */
export function fixtureNames(): string[] {
  return readdirSync(FIXTURES)
    .filter((f) => f.endsWith('.json'))
    .map((f) => f.slice(0, -'.json'.length))
    .sort();
}

export function loadFixture(name: string): FlowDefinition {
  return JSON.parse(readFileSync(`${FIXTURES}${name}.json`, 'utf8')) as FlowDefinition;
}

/** The definition as CDK would deploy it: `${TaskWorkerArn}` substituted. */
export function deployable(flow: FlowDefinition): AslDefinition {
  return applySubstitutions(compileFlow(flow), { [TASK_WORKER_SUBSTITUTION]: TASK_WORKER_ARN });
}

type AslValidator = (
  definition: unknown,
  options?: { checkPaths?: boolean; checkArn?: boolean },
) => { isValid: boolean; errors: unknown[]; errorsText: (separator?: string) => string };
// asl-validator is CommonJS without types; it also writes into the definition, so give it a copy.
const aslValidator = createRequire(import.meta.url)('asl-validator') as AslValidator;

export function validateAsl(definition: AslDefinition) {
  return aslValidator(structuredClone(definition), { checkPaths: true, checkArn: true });
}

const runnerValidated = new Set<string>();

export interface LocalRun {
  result: ExecutionResult;
  calls: string[];
}

/**
 * Runs a flow with aws-local-stepfunctions, every Task state handled by `handler` (through
 * `taskResourceLocalHandlers`, keyed by state name). `calls` lists task ids in call order.
 */
export async function runLocally(
  flow: FlowDefinition,
  variables: Record<string, string>,
  handler: TaskHandler,
  waitTimeOverrides: Record<string, number> = {},
  options: { validate?: boolean } = {},
): Promise<LocalRun> {
  const definition = forLocalRun(deployable(flow));
  const calls: string[] = [];
  // The runner validates a definition itself (with its bundled asl-validator 3), which is slow:
  // once per distinct definition is enough, and never when told not to.
  const key = JSON.stringify(definition);
  const validate = options.validate !== false && !runnerValidated.has(key);
  runnerValidated.add(key);
  const validationOptions = validate ? { checkArn: true, checkPaths: true } : { noValidate: true };
  const machine = new StateMachine(definition as never, { validationOptions });
  const execution = machine.run({ run: { id: 'run-1', flowId: flow.id }, variables } as never, {
    // As the executors run it: task-token states (an upload wait, a long task) read $$.Task.Token.
    context: { Task: { Token: 'local-task-token' } } as never,
    overrides: {
      taskResourceLocalHandlers: localTaskHandlers(definition, (invocation, name) => {
        calls.push(invocation.taskId);
        return handler(invocation, name);
      }) as never,
      waitTimeOverrides,
      // Retries (of Lambda's own errors) happen at once here, not after seconds of backoff.
      retryIntervalOverrides: Object.fromEntries(taskStates(definition).map(([name]) => [name, 0])),
    },
  });
  try {
    return { result: { kind: 'succeeded', output: await execution.result }, calls };
  } catch (e) {
    if (!(e instanceof ExecutionError)) throw e;
    const cause = (e as Error & { cause?: { name?: string; message?: string } }).cause;
    return { result: { kind: 'failed', error: cause?.name ?? 'unknown', cause: cause?.message }, calls };
  }
}
