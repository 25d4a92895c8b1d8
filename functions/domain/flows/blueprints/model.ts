/**
 * The flow definition: what the console saves (one version of a flow blueprint) and what the
 * compiler turns into Amazon States Language. The JSON format is documented in
 * `statemachines/README.md`; `validate.ts` checks it and names every problem at once.
 */

export const FLOW_FORMAT_VERSION = 1;

/** `Public` is displayed in the console but cannot be chosen (spec, "Access levels of a flow"). */
export type FlowAccessLevel = 'Private' | 'Internal';
export const FLOW_ACCESS_LEVELS: readonly FlowAccessLevel[] = ['Private', 'Internal'];

/** Control tasks steer the run; data tasks act on datasets and the outside world. */
export const CONTROL_TASK_TYPES = ['setVariables', 'decision', 'stopRun', 'setDescription', 'wait'] as const;
export const DATA_TASK_TYPES = [
  'sparqlQuery',
  'sparqlUpdate',
  'loadFromUrl',
  'shaclValidation',
  'httpRequest',
  'sendEmail',
  'setAccessLevel',
  'serviceAction',
] as const;
export type TaskType = (typeof CONTROL_TASK_TYPES)[number] | (typeof DATA_TASK_TYPES)[number];
export const TASK_TYPES: readonly TaskType[] = [...CONTROL_TASK_TYPES, ...DATA_TASK_TYPES];

export function isTaskType(value: unknown): value is TaskType {
  return typeof value === 'string' && (TASK_TYPES as readonly string[]).includes(value);
}

export interface FlowDefinition {
  formatVersion: typeof FLOW_FORMAT_VERSION;
  /** The flow ID (part of `/flows/blueprints/{account}/{flow}`). */
  id: string;
  /** At most 80 characters. */
  name: string;
  description: string;
  accessLevel: FlowAccessLevel;
  tasks: FlowTask[];
  connections: FlowConnection[];
  variables: FlowVariable[];
  outputVariables: OutputVariable[];
  maskedValues: MaskedValue[];
  presets: Preset[];
}

export interface FlowTask {
  /** Stable id: a letter, then letters, digits or underscores; at most 64. State names derive from it. */
  id: string;
  /** Shown in the console; at most 40 characters. */
  label: string;
  type: TaskType;
  /** Type-specific settings (see the catalogue); text may reference variables as `?name`. */
  settings: Record<string, unknown>;
  /** The task's Timeout; no timeout when absent. */
  timeoutSeconds?: number;
}

/** `from` must finish (or be skipped) before `to` starts. */
export interface FlowConnection {
  from: string;
  to: string;
}

export interface FlowVariable {
  /** Referenced in tasks as `?name`; names starting `system_` are reserved. */
  name: string;
  description: string;
  /** A run cannot start without a value. */
  required: boolean;
  /** When not empty, the only values a run may give. */
  allowedOptions: string[];
}

/** Set during a run by a Set variables task; never supplied at run start. */
export interface OutputVariable {
  name: string;
  description: string;
}

/**
 * A named secret, used as `?name`. The definition carries only the name: values are kept apart
 * (Manage flow masked variables permission) and never travel when a flow is copied.
 */
export interface MaskedValue {
  name: string;
  description: string;
}

export interface Preset {
  /** At most 80 characters. */
  name: string;
  /** Values of flow variables (not output variables, not masked values). */
  values: Record<string, string>;
  /** At most one preset is the default: it prefills the Run dialog and new schedules. */
  default: boolean;
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
