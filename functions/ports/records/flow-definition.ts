/**
 * The flow definition as stored in a flow version: what the console saves and the compiler turns
 * into Amazon States Language (format: `statemachines/README.md`). Types only; the task type
 * lists, validation and the settings the compiler reads live in domain/flows/blueprints.
 */

/** `Public` is displayed in the console but cannot be chosen (spec, "Access levels of a flow"). */
export type FlowAccessLevel = 'Private' | 'Internal';

/** Control tasks steer the run (`CONTROL_TASK_TYPES` in domain/flows/blueprints/model.ts). */
export type ControlTaskType = 'setVariables' | 'decision' | 'stopRun' | 'setDescription' | 'wait';
/** Data tasks act on datasets and the outside world (`DATA_TASK_TYPES`). */
export type DataTaskType =
  | 'sparqlQuery'
  | 'sparqlUpdate'
  | 'loadFromUrl'
  | 'shaclValidation'
  | 'httpRequest'
  | 'sendEmail'
  | 'setAccessLevel'
  | 'serviceAction';
export type TaskType = ControlTaskType | DataTaskType;

export interface FlowDefinition {
  /** `FLOW_FORMAT_VERSION`: the only format there is so far. */
  formatVersion: 1;
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
