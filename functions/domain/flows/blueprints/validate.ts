/**
 * Validation of a flow definition on save. It names every problem (it never stops at the
 * first), each with a path and a message saying what to fix, and returns the normalized
 * definition (defaults filled in) only when there is none.
 */
import { TASK_CATALOGUE } from '../tasks/catalogue.js';
import { isPlainObject, kindOf, SettingsReader, shown, type CheckContext } from '../tasks/settings-reader.js';
import { buildGraph, findCycles } from './graph.js';
import { charLength, FLOW_LIMITS } from '../limits.js';
import {
  FLOW_ACCESS_LEVELS,
  FLOW_FORMAT_VERSION,
  isTaskType,
  RESERVED_VARIABLE_PREFIX,
  SYSTEM_VARIABLES,
  TASK_TYPES,
  type FlowAccessLevel,
  type FlowConnection,
  type FlowDefinition,
  type FlowTask,
  type FlowVariable,
  type MaskedValue,
  type OutputVariable,
  type Preset,
} from './model.js';
import { childPath, FlowValidationError, type FlowProblem, type FlowProblemCode } from './problems.js';
import { findVariableReferences } from './variables.js';

export type FlowValidation = { ok: true; flow: FlowDefinition } | { ok: false; problems: FlowProblem[] };

const FLOW_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
const TASK_ID = /^[A-Za-z][A-Za-z0-9_]{0,63}$/;
const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

const TOP_LEVEL_FIELDS = [
  'formatVersion',
  'id',
  'name',
  'description',
  'accessLevel',
  'tasks',
  'connections',
  'variables',
  'outputVariables',
  'maskedValues',
  'presets',
];

/** Checks a definition as posted by the console. */
export function validateFlow(input: unknown): FlowValidation {
  const problems: FlowProblem[] = [];
  const add = (path: string, code: FlowProblemCode, message: string) => problems.push({ path, code, message });
  if (!isPlainObject(input)) {
    return { ok: false, problems: [{ path: '', code: 'invalid', message: `A flow definition is a JSON object, not ${kindOf(input)}.` }] };
  }
  const fields = new Fields(input, '', add);
  for (const key of Object.keys(input)) {
    if (!TOP_LEVEL_FIELDS.includes(key)) add(key, 'invalid', `Unknown field "${key}"; remove it or check its spelling.`);
  }

  if (input.formatVersion !== undefined && input.formatVersion !== FLOW_FORMAT_VERSION) {
    add('formatVersion', 'invalid', `Only format version ${FLOW_FORMAT_VERSION} is known.`);
  }
  const id = fields.text('id', { required: true });
  if (id !== undefined && id !== '' && !FLOW_ID.test(id)) {
    add('id', 'invalid', 'A flow ID has 1 to 64 letters, digits, hyphens or underscores and starts with a letter or digit.');
  }
  const name = fields.text('name', { required: true, max: FLOW_LIMITS.flowName });
  const description = fields.text('description') ?? '';
  const accessLevel = readAccessLevel(input.accessLevel, add);

  // Variables, output variables and masked values share one namespace of `?name`.
  const variables = fields.list('variables', (r) => readVariable(r));
  const outputVariables = fields.list('outputVariables', (r) => readNamed(r, 'output variable'));
  const maskedValues = fields.list('maskedValues', (r) => readNamed(r, 'masked value'));
  const defined = checkNames(variables, outputVariables, maskedValues, add);

  // Past the size limits the flow is refused as a whole: the per-task and graph checks would cost
  // time on untrusted input and bury the one problem that matters under thousands.
  const tooMany = [
    checkCount(input.tasks, 'tasks', FLOW_LIMITS.tasks, 'tasks', add),
    checkCount(input.connections, 'connections', FLOW_LIMITS.connections, 'connections', add),
  ];
  if (tooMany.some(Boolean)) return { ok: false, problems };

  const tasks = fields.list('tasks', (r) => readTask(r));
  const taskIds = new Set<string>();
  tasks.forEach(({ item, path }) => {
    if (!item?.id) return;
    if (taskIds.has(item.id)) add(childPath(path, 'id'), 'duplicate', `Another task already has id "${item.id}"; task ids are unique.`);
    taskIds.add(item.id);
  });

  const connections = fields.list('connections', (r) => readConnection(r));
  const seenConnections = new Set<string>();
  connections.forEach(({ item, path }) => {
    if (!item) return;
    for (const end of ['from', 'to'] as const) {
      if (item[end] && !taskIds.has(item[end])) {
        add(childPath(path, end), 'dangling-connection', `There is no task "${item[end]}"; connect existing tasks only.`);
      }
    }
    const key = `${item.from}\u0000${item.to}`;
    if (seenConnections.has(key)) add(path, 'duplicate', `"${item.from}" is already connected to "${item.to}".`);
    seenConnections.add(key);
  });
  const validConnections = connections.flatMap(({ item }) => (item && taskIds.has(item.from) && taskIds.has(item.to) ? [item] : []));
  const graph = buildGraph([...taskIds], validConnections);
  for (const cycle of findCycles(graph)) {
    add(
      'connections',
      'cycle',
      cycle.length === 2
        ? `Task "${cycle[0]}" is connected to itself; remove that connection.`
        : `Tasks ${cycle.map((t) => `"${t}"`).join(' → ')} form a cycle; remove one of these connections.`,
    );
  }

  // Task settings, through the catalogue; every text they accept is scanned for `?name`.
  const references: { path: string; text: string }[] = [];
  let sendEmailTasks = 0;
  tasks.forEach(({ item, path }) => {
    if (!item || !isTaskType(item.type)) return;
    if (item.type === 'sendEmail') sendEmailTasks++;
    const settingsPath = childPath(path, 'settings');
    checkPayload(item.settings, settingsPath, add);
    const ctx: CheckContext = {
      problem: add,
      references: (p, text) => references.push({ path: p, text }),
      isDefinedVariable: (n) => defined.all.has(n),
      isFlowVariable: (n) => defined.flow.has(n),
      isOutputVariable: (n) => defined.output.has(n),
      successors: item.id && taskIds.has(item.id) ? graph.succs.get(item.id) ?? [] : [],
      taskIds,
      timeoutSeconds: item.timeoutSeconds,
      taskPath: path,
      ...(item.id && TASK_ID.test(item.id) ? { taskId: item.id } : {}),
    };
    TASK_CATALOGUE[item.type].check(new SettingsReader(item.settings, settingsPath, ctx), ctx);
  });
  if (sendEmailTasks > FLOW_LIMITS.sendEmailTasks) {
    add('tasks', 'too-many', `At most ${FLOW_LIMITS.sendEmailTasks} Send email tasks per flow; this flow has ${sendEmailTasks}.`);
  }
  for (const { path, text } of references) {
    for (const ref of findVariableReferences(text)) {
      if (defined.all.has(ref)) continue;
      add(
        path,
        'undefined-variable',
        ref.startsWith(RESERVED_VARIABLE_PREFIX)
          ? `?${ref} is not a system variable (those are ${SYSTEM_VARIABLES.map((s) => `?${s}`).join(', ')}).`
          : `?${ref} is not defined: add a variable, output variable or masked value called "${ref}" (or write \\? for a literal question mark).`,
      );
    }
  }

  const presets = fields.list('presets', (r) => readPreset(r));
  checkPresets(presets, variables, defined, add);

  if (problems.length > 0) return { ok: false, problems };
  const flow: FlowDefinition = {
    formatVersion: FLOW_FORMAT_VERSION,
    id: id!,
    name: name!,
    description,
    accessLevel: accessLevel!,
    tasks: tasks.map((t) => t.item as FlowTask),
    connections: connections.map((c) => c.item!),
    variables: variables.map((v) => v.item!),
    outputVariables: outputVariables.map((v) => v.item!),
    maskedValues: maskedValues.map((v) => v.item!),
    presets: presets.map((p) => p.item!),
  };
  return { ok: true, flow };
}

/** The normalized definition, or a FlowValidationError (400) listing every problem. */
export function parseFlow(input: unknown): FlowDefinition {
  const result = validateFlow(input);
  if (!result.ok) throw new FlowValidationError(result.problems);
  return result.flow;
}

// ---- Readers for the fixed parts of the definition ----

/** A list longer than `max` is a `too-many` problem (true); anything else is left to the readers. */
function checkCount(value: unknown, path: string, max: number, what: string, add: Add): boolean {
  if (!Array.isArray(value) || value.length <= max) return false;
  add(path, 'too-many', `A flow has at most ${max.toLocaleString('en-US')} ${what}; this one has ${value.length.toLocaleString('en-US')}. Split the work over several flows.`);
  return true;
}

type Add = (path: string, code: FlowProblemCode, message: string) => void;
type Listed<T> = { item: T | undefined; path: string };

class Fields {
  constructor(
    readonly value: Record<string, unknown>,
    readonly path: string,
    readonly add: Add,
  ) {}

  at(key: string): string {
    return childPath(this.path, key);
  }

  text(key: string, options: { required?: boolean; max?: number } = {}): string | undefined {
    const v = this.value[key];
    if (v === undefined || v === null) {
      if (options.required) this.add(this.at(key), 'invalid', 'Required.');
      return undefined;
    }
    if (typeof v !== 'string') {
      this.add(this.at(key), 'invalid', `Expected a text, got ${kindOf(v)}.`);
      return undefined;
    }
    if (options.required && v.trim() === '') this.add(this.at(key), 'invalid', 'Required; it is empty.');
    if (options.max !== undefined && charLength(v) > options.max) {
      this.add(this.at(key), 'too-long', `At most ${options.max} characters; this has ${charLength(v)}.`);
    }
    return v;
  }

  bool(key: string): boolean | undefined {
    const v = this.value[key];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'boolean') {
      this.add(this.at(key), 'invalid', `Expected true or false, got ${kindOf(v)}.`);
      return undefined;
    }
    return v;
  }

  texts(key: string): string[] {
    const v = this.value[key];
    if (v === undefined || v === null) return [];
    if (!Array.isArray(v)) {
      this.add(this.at(key), 'invalid', `Expected a list of texts, got ${kindOf(v)}.`);
      return [];
    }
    return v.filter((item, i) => {
      if (typeof item === 'string') return true;
      this.add(childPath(this.at(key), i), 'invalid', `Expected a text, got ${kindOf(item)}.`);
      return false;
    });
  }

  /** A list of objects, each read by `read`; a missing list is empty. */
  list<T>(key: string, read: (fields: Fields) => T | undefined): Listed<T>[] {
    const v = this.value[key];
    if (v === undefined || v === null) return [];
    if (!Array.isArray(v)) {
      this.add(this.at(key), 'invalid', `Expected a list, got ${kindOf(v)}.`);
      return [];
    }
    return v.map((item, i) => {
      const path = childPath(this.at(key), i);
      if (!isPlainObject(item)) {
        this.add(path, 'invalid', `Expected an object, got ${kindOf(item)}.`);
        return { item: undefined, path };
      }
      return { item: read(new Fields(item, path, this.add)), path };
    });
  }

  only(keys: string[]): void {
    for (const key of Object.keys(this.value)) {
      if (!keys.includes(key)) this.add(this.at(key), 'invalid', `Unknown field "${key}"; remove it or check its spelling.`);
    }
  }
}

function readAccessLevel(v: unknown, add: Add): FlowAccessLevel | undefined {
  if (FLOW_ACCESS_LEVELS.includes(v as FlowAccessLevel)) return v as FlowAccessLevel;
  if (v === undefined || v === null) {
    add('accessLevel', 'access-level', 'Required: choose Private or Internal.');
  } else if (typeof v === 'string' && v.toLowerCase() === 'public') {
    add('accessLevel', 'access-level', 'A flow cannot be Public; choose Private or Internal.');
  } else {
    add('accessLevel', 'access-level', `Expected Private or Internal, got ${shown(v)}.`);
  }
  return undefined;
}

function readVariableName(f: Fields, what: string): string | undefined {
  const name = f.text('name', { required: true });
  if (name === undefined || name === '') return undefined;
  if (name.startsWith('?') && VARIABLE_NAME.test(name.slice(1))) {
    f.add(f.at('name'), 'invalid', `Write the ${what} name without "?": "${name.slice(1)}".`);
  } else if (!VARIABLE_NAME.test(name)) {
    f.add(f.at('name'), 'invalid', `A ${what} name has letters, digits and underscores and does not start with a digit.`);
  }
  if (name.replace(/^\?/, '').startsWith(RESERVED_VARIABLE_PREFIX)) {
    f.add(f.at('name'), 'reserved-name', `Names starting with "${RESERVED_VARIABLE_PREFIX}" are reserved for system variables; rename the ${what}.`);
  }
  return name;
}

function readVariable(f: Fields): FlowVariable | undefined {
  f.only(['name', 'description', 'required', 'allowedOptions']);
  const name = readVariableName(f, 'variable');
  const description = f.text('description') ?? '';
  const required = f.bool('required') ?? false;
  const allowedOptions = f.texts('allowedOptions');
  const seen = new Set<string>();
  allowedOptions.forEach((option, i) => {
    if (seen.has(option)) f.add(childPath(f.at('allowedOptions'), i), 'duplicate', `"${option}" is listed twice.`);
    seen.add(option);
  });
  return name === undefined ? undefined : { name, description, required, allowedOptions };
}

function readNamed(f: Fields, what: string): OutputVariable | MaskedValue | undefined {
  f.only(['name', 'description']);
  const name = readVariableName(f, what);
  const description = f.text('description') ?? '';
  return name === undefined ? undefined : { name, description };
}

interface Defined {
  flow: Set<string>;
  output: Set<string>;
  masked: Set<string>;
  all: Set<string>;
}

function checkNames(
  variables: Listed<FlowVariable>[],
  outputs: Listed<OutputVariable>[],
  masked: Listed<MaskedValue>[],
  add: Add,
): Defined {
  const defined: Defined = { flow: new Set(), output: new Set(), masked: new Set(), all: new Set(SYSTEM_VARIABLES) };
  const owner = new Map<string, string>();
  const groups: [Listed<{ name: string }>[], Set<string>, string][] = [
    [variables, defined.flow, 'flow variable'],
    [outputs, defined.output, 'output variable'],
    [masked, defined.masked, 'masked value'],
  ];
  for (const [list, set, what] of groups) {
    for (const { item, path } of list) {
      if (!item) continue;
      const taken = owner.get(item.name);
      if (taken === what) {
        add(childPath(path, 'name'), 'duplicate', `Another ${what} is already called "${item.name}".`);
      } else if (taken === 'flow variable' && what === 'output variable') {
        add(childPath(path, 'name'), 'output-variable-clash', `An output variable cannot share the name of flow variable "${item.name}"; rename one of them.`);
      } else if (taken) {
        add(childPath(path, 'name'), 'name-clash', `A ${taken} is already called "${item.name}"; ?${item.name} must mean one thing.`);
      }
      if (!taken) owner.set(item.name, what);
      set.add(item.name);
      defined.all.add(item.name);
    }
  }
  return defined;
}

const TASK_FIELDS = ['id', 'label', 'type', 'settings', 'timeoutSeconds'];

function readTask(f: Fields): Partial<FlowTask> & { settings: Record<string, unknown> } {
  f.only(TASK_FIELDS);
  const id = f.text('id', { required: true });
  if (id && !TASK_ID.test(id)) {
    f.add(f.at('id'), 'invalid', 'A task id starts with a letter, then letters, digits or underscores, at most 64 in all.');
  }
  const label = f.text('label', { required: true, max: FLOW_LIMITS.taskLabel });
  const type = f.value.type;
  if (typeof type !== 'string' || !isTaskType(type)) {
    f.add(
      f.at('type'),
      'unknown-task-type',
      type === undefined ? `Required: one of ${TASK_TYPES.join(', ')}.` : `Unknown task type ${shown(type)}; use one of ${TASK_TYPES.join(', ')}.`,
    );
  }
  let settings: Record<string, unknown> = {};
  if (f.value.settings !== undefined && f.value.settings !== null) {
    if (isPlainObject(f.value.settings)) settings = f.value.settings;
    else f.add(f.at('settings'), 'invalid', `Expected an object, got ${kindOf(f.value.settings)}.`);
  }
  const timeout = f.value.timeoutSeconds;
  let timeoutSeconds: number | undefined;
  if (timeout !== undefined && timeout !== null) {
    if (typeof timeout === 'number' && Number.isInteger(timeout) && timeout >= 1 && timeout <= FLOW_LIMITS.taskTimeoutSeconds) {
      timeoutSeconds = timeout;
    } else {
      f.add(f.at('timeoutSeconds'), 'invalid', `A Timeout is whole seconds from 1 to ${FLOW_LIMITS.taskTimeoutSeconds.toLocaleString('en-US')} (a year); leave it out for no timeout.`);
    }
  }
  // Key order of the normalized task is fixed, for stable output.
  return {
    id,
    label,
    type: isTaskType(type) ? type : undefined,
    settings,
    ...(timeoutSeconds !== undefined ? { timeoutSeconds } : {}),
  };
}

function readConnection(f: Fields): FlowConnection | undefined {
  f.only(['from', 'to']);
  const from = f.text('from', { required: true });
  const to = f.text('to', { required: true });
  return from && to ? { from, to } : undefined;
}

function readPreset(f: Fields): Preset | undefined {
  f.only(['name', 'values', 'default']);
  const name = f.text('name', { required: true, max: FLOW_LIMITS.presetName });
  const isDefault = f.bool('default') ?? false;
  const values: Record<string, string> = {};
  const raw = f.value.values;
  if (raw !== undefined && raw !== null && !isPlainObject(raw)) {
    f.add(f.at('values'), 'invalid', `Expected an object of variable names to values, got ${kindOf(raw)}.`);
  } else {
    for (const [key, value] of Object.entries(raw ?? {})) {
      if (typeof value === 'string') values[key] = value;
      else f.add(childPath(f.at('values'), key), 'invalid', `Every value is text; got ${kindOf(value)}.`);
    }
  }
  return name === undefined ? undefined : { name, values, default: isDefault };
}

function checkPresets(presets: Listed<Preset>[], variables: Listed<FlowVariable>[], defined: Defined, add: Add): void {
  if (presets.length > 0 && defined.flow.size === 0) {
    add('presets', 'preset-without-variables', 'Presets hold variable values, so the flow needs variables first; add variables or remove the presets.');
  }
  const byName = new Map(variables.flatMap(({ item }) => (item ? [[item.name, item] as const] : [])));
  // Sets, not list lookups: thousands of presets against thousands of options stay linear.
  const allowed = new Map(variables.flatMap(({ item }) => (item ? [[item.name, new Set(item.allowedOptions)] as const] : [])));
  const names = new Set<string>();
  const defaults: string[] = [];
  for (const { item, path } of presets) {
    if (!item) continue;
    if (names.has(item.name)) add(childPath(path, 'name'), 'duplicate', `Another preset is already called "${item.name}".`);
    names.add(item.name);
    if (item.default) defaults.push(item.name);
    for (const [key, value] of Object.entries(item.values)) {
      const at = childPath(childPath(path, 'values'), key);
      const variable = byName.get(key);
      if (!variable) {
        add(
          at,
          'unknown-preset-variable',
          defined.output.has(key)
            ? `?${key} is an output variable, set by a Set variables task during the run; a preset cannot give it.`
            : defined.masked.has(key)
              ? `?${key} is a masked value; its value is kept apart, not in presets.`
              : `The flow has no variable "${key}".`,
        );
      } else if (variable.allowedOptions.length > 0 && value !== '' && !allowed.get(key)!.has(value)) {
        add(at, 'option-not-allowed', `"${value}" is not an allowed option of ?${key} (${variable.allowedOptions.join(', ')}).`);
      }
    }
  }
  if (defaults.length > 1) {
    add('presets', 'multiple-default-presets', `At most one preset can be the default; ${defaults.map((d) => `"${d}"`).join(' and ')} are marked default.`);
  }
}

/** The compiler's `definitionSubstitutions` placeholder (see statemachines/compile.ts). */
const SUBSTITUTION_PLACEHOLDER = '${TaskWorkerArn}';

/**
 * Settings sit in the Parameters of a Task state. Setting names ending in `.$` would be read as
 * paths by Step Functions, and the placeholder the deployment substitutes must not appear in a
 * text; both are refused anywhere in the settings.
 */
function checkPayload(value: unknown, path: string, add: Add, depth = 0): void {
  if (typeof value === 'string' && value.includes(SUBSTITUTION_PLACEHOLDER)) {
    add(path, 'invalid', `"${SUBSTITUTION_PLACEHOLDER}" is reserved in flow definitions; write it differently.`);
  } else if ((Array.isArray(value) || isPlainObject(value)) && depth >= MAX_SETTINGS_DEPTH) {
    // Deeper settings than any task reads: refused before anything walks (or stores) them.
    add(path, 'invalid', `Settings nest at most ${MAX_SETTINGS_DEPTH} lists or objects deep; flatten this value.`);
  } else if (Array.isArray(value)) {
    value.forEach((item, i) => checkPayload(item, childPath(path, i), add, depth + 1));
  } else if (isPlainObject(value)) {
    for (const [key, item] of Object.entries(value)) {
      if (key.endsWith('.$')) add(childPath(path, key), 'invalid', `Setting names cannot end with ".$"; rename "${key}".`);
      checkPayload(item, childPath(path, key), add, depth + 1);
    }
  }
}

/** Task settings are a few levels deep (decision branches → conditions → condition). */
const MAX_SETTINGS_DEPTH = 16;
