import { ValidationError } from '../../shared/errors.js';

/** What kind of problem; stable, for the console to react on. */
export type FlowProblemCode =
  /** A field is missing, of the wrong type or badly formed. */
  | 'invalid'
  | 'too-long'
  | 'too-many'
  | 'access-level'
  | 'unknown-task-type'
  | 'unknown-setting'
  | 'duplicate'
  | 'dangling-connection'
  | 'cycle'
  | 'undefined-variable'
  | 'reserved-name'
  | 'output-variable-clash'
  | 'name-clash'
  | 'unknown-output-variable'
  | 'decision-branch'
  | 'stop-run-successor'
  | 'invalid-sparql'
  | 'query-form'
  | 'preset-without-variables'
  | 'multiple-default-presets'
  | 'unknown-preset-variable'
  | 'option-not-allowed';

export interface FlowProblem {
  code: FlowProblemCode;
  /** Where, as a path into the definition: `tasks[2].settings.query.text`. `""` is the whole flow. */
  path: string;
  /** What is wrong and what to do, for people. */
  message: string;
}

/** The message names the first problems; `problems` holds them all. */
const MAX_PROBLEMS_IN_MESSAGE = 20;

/** A 400 listing every problem; `problems` keeps them apart for the console. */
export class FlowValidationError extends ValidationError {
  override name = 'FlowValidationError';
  constructor(readonly problems: readonly FlowProblem[]) {
    super(
      problems.length === 1
        ? `The flow has a problem: ${describe(problems[0]!)}`
        : `The flow has ${problems.length} problems: ${problems
            .slice(0, MAX_PROBLEMS_IN_MESSAGE)
            .map((p, i) => `(${i + 1}) ${describe(p)}`)
            .join(' ')}${problems.length > MAX_PROBLEMS_IN_MESSAGE ? ` … and ${problems.length - MAX_PROBLEMS_IN_MESSAGE} more (see problems).` : ''}`,
    );
  }
}

function describe(p: FlowProblem): string {
  return p.path ? `${p.path}: ${p.message}` : p.message;
}

/** `base.key`, or `base["key"]` when the key is not an identifier. */
export function childPath(base: string, key: string | number): string {
  if (typeof key === 'number') return `${base}[${key}]`;
  if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(key)) return base ? `${base}.${key}` : key;
  return `${base}[${JSON.stringify(key)}]`;
}
