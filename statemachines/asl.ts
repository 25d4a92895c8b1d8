/**
 * The subset of Amazon States Language (JSONPath query language) the flow compiler emits. Only
 * features aws-local-stepfunctions also runs: no JSONata, no `Assign`. The one `.waitForTaskToken`
 * state (a data upload hook's wait) is handled in-process on the embedded platform.
 */

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

export interface AslDefinition {
  Comment?: string;
  StartAt: string;
  States: Record<string, AslState>;
}

export type AslState = TaskState | PassState | ChoiceState | ParallelState | WaitState | FailState;

/** Exactly one of `Next` or `End`. */
interface Transition {
  Next?: string;
  End?: true;
}

export interface Catcher {
  ErrorEquals: string[];
  ResultPath?: string;
  Next: string;
}

export interface Retrier {
  ErrorEquals: string[];
  IntervalSeconds?: number;
  MaxAttempts?: number;
  BackoffRate?: number;
  MaxDelaySeconds?: number;
  JitterStrategy?: 'FULL' | 'NONE';
}

export interface TaskState extends Transition {
  Type: 'Task';
  Comment?: string;
  Resource: string;
  Parameters: Record<string, JsonValue>;
  TimeoutSeconds?: number;
  HeartbeatSeconds?: number;
  ResultSelector?: Record<string, JsonValue>;
  ResultPath?: string;
  Retry?: Retrier[];
  Catch?: Catcher[];
}

export interface PassState extends Transition {
  Type: 'Pass';
  Comment?: string;
  Result?: JsonValue;
  Parameters?: Record<string, JsonValue>;
  ResultPath?: string;
}

export type ChoiceRule =
  | { Variable: string; StringEquals: string }
  | { Variable: string; IsPresent: boolean }
  | { Variable: string; BooleanEquals: boolean }
  | { Variable: string; NumericGreaterThan: number }
  | { And: ChoiceRule[] }
  | { Or: ChoiceRule[] };

export interface ChoiceState {
  Type: 'Choice';
  Comment?: string;
  Choices: (ChoiceRule & { Next: string })[];
  Default?: string;
}

export interface ParallelState extends Transition {
  Type: 'Parallel';
  Comment?: string;
  Branches: AslDefinition[];
  ResultSelector?: Record<string, JsonValue>;
  ResultPath?: string;
}

export interface WaitState extends Transition {
  Type: 'Wait';
  Comment?: string;
  SecondsPath: string;
}

export interface FailState {
  Type: 'Fail';
  Comment?: string;
  Error?: string;
  Cause?: string;
  ErrorPath?: string;
  CausePath?: string;
}
