/**
 * The flow definition: what the console saves (one version of a flow blueprint) and what the
 * compiler turns into Amazon States Language. The JSON format is documented in
 * `statemachines/README.md`; `validate.ts` checks it and names every problem at once.
 */
import type { ControlTaskType, DataTaskType, FlowAccessLevel, FlowDefinition, TaskType } from '../../../ports/records/flow-definition.js';

// The stored records are types of the ports (ports/records); re-exported for the domain's importers.
export type {
  ControlTaskType,
  DataTaskType,
  FlowAccessLevel,
  FlowConnection,
  FlowDefinition,
  FlowTask,
  FlowVariable,
  MaskedValue,
  OutputVariable,
  Preset,
  TaskType,
} from '../../../ports/records/flow-definition.js';

export const FLOW_FORMAT_VERSION: FlowDefinition['formatVersion'] = 1;

/** `Public` is displayed in the console but cannot be chosen (spec, "Access levels of a flow"). */
export const FLOW_ACCESS_LEVELS: readonly FlowAccessLevel[] = ['Private', 'Internal'];

/** Control tasks steer the run; data tasks act on datasets and the outside world. */
export const CONTROL_TASK_TYPES = ['setVariables', 'decision', 'stopRun', 'setDescription', 'wait'] as const satisfies readonly ControlTaskType[];
export const DATA_TASK_TYPES = [
  'sparqlQuery',
  'sparqlUpdate',
  'loadFromUrl',
  'shaclValidation',
  'httpRequest',
  'sendEmail',
  'setAccessLevel',
  'serviceAction',
] as const satisfies readonly DataTaskType[];
// Compile-time check that the lists name every task type (the types live with the stored records).
true satisfies (TaskType extends (typeof CONTROL_TASK_TYPES)[number] | (typeof DATA_TASK_TYPES)[number] ? true : false);
export const TASK_TYPES: readonly TaskType[] = [...CONTROL_TASK_TYPES, ...DATA_TASK_TYPES];

export function isTaskType(value: unknown): value is TaskType {
  return typeof value === 'string' && (TASK_TYPES as readonly string[]).includes(value);
}

/** System variables: set on every run (some only on hook runs); cannot be defined or overridden. */
export const SYSTEM_VARIABLES = [
  'system_triggererAccountName',
  'system_platformToken',
  'system_uploadedToAccountName',
  'system_uploadedToDatasetName',
  'system_uploadedGraphIRI',
  'system_uploadedAssetName',
  'system_uploadedAssetURL',
] as const;
export const RESERVED_VARIABLE_PREFIX = 'system_';

// ---- Settings of the control tasks that the compiler and the runtime read ----

export type ConditionOperator =
  | 'equals'
  | 'notEquals'
  | 'contains'
  | 'matches'
  | 'lt'
  | 'le'
  | 'gt'
  | 'ge'
  | 'empty'
  | 'notEmpty';
export const CONDITION_OPERATORS: readonly ConditionOperator[] = [
  'equals',
  'notEquals',
  'contains',
  'matches',
  'lt',
  'le',
  'gt',
  'ge',
  'empty',
  'notEmpty',
];
export const NUMERIC_OPERATORS: readonly ConditionOperator[] = ['lt', 'le', 'gt', 'ge'];
export const VALUELESS_OPERATORS: readonly ConditionOperator[] = ['empty', 'notEmpty'];

export interface DecisionCondition {
  /** A variable name without `?`: flow, output, masked or system variable. */
  variable: string;
  operator: ConditionOperator;
  /** Required except for `empty`/`notEmpty`; may reference variables, except for `matches` (a regex). */
  value?: string;
}

export interface DecisionBranch {
  /** A task this decision is connected to. */
  to: string;
  /** `all` (default): every condition holds; `any`: at least one does. */
  match?: 'all' | 'any';
  conditions: DecisionCondition[];
}

/** Branches are tried in order; the first that holds is taken, else `otherwise`, else none. */
export interface DecisionSettings {
  branches: DecisionBranch[];
  otherwise?: string;
}

export interface SetVariablesSettings {
  /** Output variable name → text (may reference variables). */
  values: Record<string, string>;
}

export interface WaitSettings {
  /** Whole seconds: a number, or text holding a number or a variable reference. */
  seconds: number | string;
}
