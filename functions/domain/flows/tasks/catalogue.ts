/**
 * The task catalogue: every task type, its settings and their rules. Each check reads the
 * settings through `SettingsReader`, which records every problem (and never stops at the
 * first), reports settings it does not know, and scans every accepted text for variable
 * references, except text that is SPARQL or a regex.
 */
import { analyzeShortSparqlNow, SparqlSyntaxError } from '../../../rdf/sparql-analysis.js';
import { isNumberText, regexProblem } from './decision.js';
import { charLength, FLOW_LIMITS } from '../limits.js';
import {
  CONDITION_OPERATORS,
  NUMERIC_OPERATORS,
  VALUELESS_OPERATORS,
  type ConditionOperator,
  type TaskType,
} from '../blueprints/model.js';
import { childPath, type FlowProblemCode } from '../blueprints/problems.js';
import { findVariableReferences, isSingleReference } from '../blueprints/variables.js';

/** What a settings check may ask about the rest of the flow. */
export interface CheckContext {
  problem(path: string, code: FlowProblemCode, message: string): void;
  /** Called for every text that may hold `?name` references. */
  references(path: string, text: string): void;
  /** A name defined as flow, output, masked or system variable. */
  isDefinedVariable(name: string): boolean;
  isFlowVariable(name: string): boolean;
  isOutputVariable(name: string): boolean;
  /** Tasks this task is connected to (its outgoing connections). */
  successors: readonly string[];
  taskIds: ReadonlySet<string>;
  timeoutSeconds?: number;
  /** `tasks[i]`, for problems about the task rather than one setting. */
  taskPath: string;
  /** The task's id, when it has a valid one (messages name it). */
  taskId?: string;
}

export interface TaskTypeSpec {
  type: TaskType;
  /** The name shown in the console. */
  title: string;
  kind: 'control' | 'data';
  check(settings: SettingsReader, ctx: CheckContext): void;
}

type TextOptions = { required?: boolean; max?: number; what?: string; references?: boolean };

/** Reads one settings object, recording problems in the context. */
export class SettingsReader {
  private readonly seen = new Set<string>();

  constructor(
    readonly value: Record<string, unknown>,
    readonly path: string,
    private readonly ctx: CheckContext,
  ) {}

  has(key: string): boolean {
    return this.value[key] !== undefined;
  }

  at(key: string): string {
    return childPath(this.path, key);
  }

  private take(key: string, required: boolean | undefined, expected: string): unknown {
    this.seen.add(key);
    const v = this.value[key];
    if (v === undefined || v === null) {
      if (required) this.ctx.problem(this.at(key), 'invalid', `Required: give ${expected}.`);
      return undefined;
    }
    return v;
  }

  text(key: string, options: TextOptions = {}): string | undefined {
    const v = this.take(key, options.required, options.what ?? 'a text');
    if (v === undefined) return undefined;
    return this.checkText(this.at(key), v, options);
  }

  private checkText(path: string, v: unknown, options: TextOptions): string | undefined {
    if (typeof v !== 'string') {
      this.ctx.problem(path, 'invalid', `Expected ${options.what ?? 'a text'}, got ${kindOf(v)}.`);
      return undefined;
    }
    if (options.required && v.trim() === '') {
      this.ctx.problem(path, 'invalid', `Required: give ${options.what ?? 'a text'}; it is empty.`);
    }
    if (options.max !== undefined && charLength(v) > options.max) {
      this.ctx.problem(
        path,
        'too-long',
        `At most ${options.max.toLocaleString('en-US')} characters; this has ${charLength(v).toLocaleString('en-US')}.`,
      );
    }
    if (options.references !== false) this.ctx.references(path, v);
    return v;
  }

  /** One of `options`; with `allowReference`, also a text that is a single `?name`. */
  choice<T extends string>(
    key: string,
    options: readonly T[],
    settings: { required?: boolean; allowReference?: boolean } = {},
  ): T | undefined {
    const expected = `one of ${options.join(', ')}`;
    const v = this.take(key, settings.required, expected);
    if (v === undefined) return undefined;
    if (typeof v === 'string' && options.includes(v as T)) return v as T;
    if (settings.allowReference && typeof v === 'string' && isSingleReference(v)) {
      this.ctx.references(this.at(key), v);
      return undefined;
    }
    this.ctx.problem(this.at(key), 'invalid', `Expected ${expected}${settings.allowReference ? ' (or a ?variable)' : ''}, got ${shown(v)}.`);
    return undefined;
  }

  flag(key: string): boolean | undefined {
    const v = this.take(key, false, 'true or false');
    if (v === undefined) return undefined;
    if (typeof v !== 'boolean') {
      this.ctx.problem(this.at(key), 'invalid', `Expected true or false, got ${kindOf(v)}.`);
      return undefined;
    }
    return v;
  }

  integer(key: string, range: { min: number; max: number; required?: boolean }): number | undefined {
    const v = this.take(key, range.required, 'a whole number');
    if (v === undefined) return undefined;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < range.min || v > range.max) {
      this.ctx.problem(this.at(key), 'invalid', `Expected a whole number from ${range.min} to ${range.max}, got ${shown(v)}.`);
      return undefined;
    }
    return v;
  }

  /** A list of texts. */
  texts(key: string, options: TextOptions = {}): string[] | undefined {
    const v = this.take(key, options.required, `a list of ${options.what ?? 'texts'}`);
    if (v === undefined) return undefined;
    if (!Array.isArray(v)) {
      this.ctx.problem(this.at(key), 'invalid', `Expected a list of ${options.what ?? 'texts'}, got ${kindOf(v)}.`);
      return undefined;
    }
    const out: string[] = [];
    v.forEach((item, i) => {
      const t = this.checkText(childPath(this.at(key), i), item, { ...options, required: true });
      if (t !== undefined) out.push(t);
    });
    return out;
  }

  /** An object of name → text (HTTP headers, variable values). */
  textMap(key: string, options: TextOptions = {}): Record<string, string> | undefined {
    const v = this.take(key, options.required, 'an object of names to texts');
    if (v === undefined) return undefined;
    if (!isPlainObject(v)) {
      this.ctx.problem(this.at(key), 'invalid', `Expected an object of names to texts, got ${kindOf(v)}.`);
      return undefined;
    }
    const out: Record<string, string> = {};
    for (const [name, item] of Object.entries(v)) {
      const t = this.checkText(childPath(this.at(key), name), item, options);
      if (t !== undefined) out[name] = t;
    }
    return out;
  }

  object(key: string, options: { required?: boolean; what?: string } = {}): SettingsReader | undefined {
    const v = this.take(key, options.required, options.what ?? 'an object');
    if (v === undefined) return undefined;
    if (!isPlainObject(v)) {
      this.ctx.problem(this.at(key), 'invalid', `Expected ${options.what ?? 'an object'}, got ${kindOf(v)}.`);
      return undefined;
    }
    return new SettingsReader(v, this.at(key), this.ctx);
  }

  /** A list of objects. */
  objects(key: string, options: { required?: boolean; what?: string } = {}): SettingsReader[] | undefined {
    const v = this.take(key, options.required, `a list of ${options.what ?? 'objects'}`);
    if (v === undefined) return undefined;
    if (!Array.isArray(v)) {
      this.ctx.problem(this.at(key), 'invalid', `Expected a list of ${options.what ?? 'objects'}, got ${kindOf(v)}.`);
      return undefined;
    }
    const out: SettingsReader[] = [];
    v.forEach((item, i) => {
      const path = childPath(this.at(key), i);
      if (!isPlainObject(item)) this.ctx.problem(path, 'invalid', `Expected ${options.what ?? 'an object'}, got ${kindOf(item)}.`);
      else out.push(new SettingsReader(item, path, this.ctx));
    });
    return out;
  }

  /** Reports every key no check read. Call last. */
  finish(): void {
    for (const key of Object.keys(this.value)) {
      if (!this.seen.has(key)) {
        this.ctx.problem(this.at(key), 'unknown-setting', `Unknown setting "${key}"; remove it or check its spelling.`);
      }
    }
  }
}

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A value for a message: a scalar as written (long texts cut), anything else by its kind (never walked). */
export function shown(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v.length > 80 ? `${v.slice(0, 80)}…` : v);
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return kindOf(v);
}

export function kindOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'an object';
  if (typeof v === 'string') return 'a text';
  return `a ${typeof v}`;
}

function hasReference(text: string): boolean {
  return findVariableReferences(text).length > 0;
}

// ---- Shared setting shapes ----

/** `{ "account": …, "dataset": … }`: a dataset, by owner and name (either may be a ?variable). */
function datasetRef(s: SettingsReader, key: string, required: boolean): void {
  const ref = s.object(key, { required, what: 'a dataset ({ "account": …, "dataset": … })' });
  if (!ref) return;
  ref.text('account', { required: true, what: 'the account owning the dataset' });
  ref.text('dataset', { required: true, what: 'the dataset name' });
  ref.finish();
}

function httpUrl(s: SettingsReader, key: string, ctx: CheckContext, required = true): void {
  const url = s.text(key, { required, what: 'a URL' });
  if (url === undefined || url.trim() === '' || hasReference(url)) return;
  let ok = false;
  try {
    ok = ['http:', 'https:'].includes(new URL(url).protocol);
  } catch {
    ok = false;
  }
  if (!ok) ctx.problem(s.at(key), 'invalid', `"${url}" is not an http(s) URL.`);
}

/**
 * A SPARQL request: `{ "text": … }` inline (at most 10,000 characters), or
 * `{ "savedQuery": { "account", "name", "version"? } }`. Returns the inline text.
 */
function sparqlSource(s: SettingsReader, key: string, ctx: CheckContext): string | undefined {
  const src = s.object(key, { required: true, what: 'the SPARQL ({ "text": … } or { "savedQuery": … })' });
  if (!src) return undefined;
  let text: string | undefined;
  if (src.has('text') === src.has('savedQuery')) {
    ctx.problem(src.path, 'invalid', 'Give exactly one of "text" (inline SPARQL) or "savedQuery" (a saved query).');
  }
  if (src.has('text')) {
    text = src.text('text', { required: true, max: FLOW_LIMITS.inlineSparql, what: 'the SPARQL text', references: false });
  }
  const saved = src.object('savedQuery', { what: 'a saved query ({ "account", "name", "version"? })' });
  if (saved) {
    saved.text('account', { required: true, what: 'the account owning the saved query' });
    saved.text('name', { required: true, what: 'the saved query name' });
    saved.integer('version', { min: 1, max: Number.MAX_SAFE_INTEGER });
    saved.finish();
  }
  src.finish();
  return text;
}

type Analysis = ReturnType<typeof analyzeShortSparqlNow>;

function analyze(text: string, path: string, ctx: CheckContext): Analysis | undefined {
  if (text.trim() === '' || charLength(text) > FLOW_LIMITS.inlineSparql) return undefined;
  try {
    return analyzeShortSparqlNow(text, FLOW_LIMITS.inlineSparql);
  } catch (e) {
    if (e instanceof SparqlSyntaxError) {
      ctx.problem(path, 'invalid-sparql', e.message);
      return undefined;
    }
    throw e;
  }
}

// ---- The catalogue ----

const setVariables: TaskTypeSpec = {
  type: 'setVariables',
  title: 'Set variables',
  kind: 'control',
  check(s, ctx) {
    const values = s.textMap('values', { required: true, what: 'a text' });
    if (values && Object.keys(values).length === 0) {
      ctx.problem(s.at('values'), 'invalid', 'Set at least one output variable.');
    }
    for (const name of Object.keys(values ?? {})) {
      if (ctx.isOutputVariable(name)) continue;
      ctx.problem(
        childPath(s.at('values'), name),
        'unknown-output-variable',
        ctx.isFlowVariable(name)
          ? `?${name} is a flow variable; Set variables only sets output variables (define one with another name).`
          : `?${name} is not an output variable of this flow; add it to "outputVariables" first.`,
      );
    }
    s.finish();
  },
};

const decision: TaskTypeSpec = {
  type: 'decision',
  title: 'Decision',
  kind: 'control',
  check(s, ctx) {
    const targets = new Set<string>();
    const target = (reader: SettingsReader, key: string, required: boolean) => {
      const to = reader.text(key, { required, what: 'the id of a connected task', references: false });
      if (to === undefined || to === '') return;
      targets.add(to);
      if (!ctx.successors.includes(to)) {
        ctx.problem(
          reader.at(key),
          'decision-branch',
          ctx.taskIds.has(to)
            ? `Task "${to}" is not connected from this decision; connect it or choose a connected task.`
            : `There is no task "${to}".`,
        );
      }
    };
    const branches = s.objects('branches', { required: true, what: 'a branch ({ "to", "conditions" })' });
    if (branches && branches.length === 0) ctx.problem(s.at('branches'), 'invalid', 'Give at least one branch.');
    for (const b of branches ?? []) {
      target(b, 'to', true);
      b.choice('match', ['all', 'any'] as const);
      const conditions = b.objects('conditions', { required: true, what: 'a condition ({ "variable", "operator", "value" })' });
      if (conditions && conditions.length === 0) ctx.problem(b.at('conditions'), 'invalid', 'Give at least one condition.');
      for (const c of conditions ?? []) condition(c, ctx);
      b.finish();
    }
    if (s.has('otherwise')) target(s, 'otherwise', false);
    for (const next of ctx.successors) {
      if (!targets.has(next)) {
        ctx.problem(
          s.at('branches'),
          'decision-branch',
          `This decision is connected to "${next}" but no branch leads there; add a branch (or "otherwise") or remove the connection.`,
        );
      }
    }
    s.finish();
  },
};

function condition(c: SettingsReader, ctx: CheckContext): void {
  const variable = c.text('variable', { required: true, what: 'a variable name', references: false });
  if (variable) {
    const name = variable.startsWith('?') ? variable.slice(1) : variable;
    if (name !== variable) {
      ctx.problem(c.at('variable'), 'invalid', `Write the variable name without "?": "${name}".`);
    }
    if (!ctx.isDefinedVariable(name)) {
      ctx.problem(c.at('variable'), 'undefined-variable', `No variable, output variable, masked value or system variable is called "${name}".`);
    }
  }
  const operator = c.choice('operator', CONDITION_OPERATORS, { required: true });
  const valueless = operator !== undefined && VALUELESS_OPERATORS.includes(operator);
  if (valueless) {
    if (c.has('value')) {
      c.text('value', { references: false });
      ctx.problem(c.at('value'), 'invalid', `"${operator}" takes no value; remove it.`);
    }
  } else {
    const value = c.text('value', { required: operator !== undefined, what: 'the value to compare with', references: operator !== 'matches' });
    if (value !== undefined && operator) checkConditionValue(operator, value, c.at('value'), ctx);
  }
  c.finish();
}

function checkConditionValue(operator: ConditionOperator, value: string, path: string, ctx: CheckContext): void {
  if (NUMERIC_OPERATORS.includes(operator) && !isNumberText(value) && !isSingleReference(value)) {
    ctx.problem(path, 'invalid', `"${operator}" compares numbers; "${value}" is not a number.`);
  }
  if (operator === 'matches') {
    const where = `${ctx.taskId ? `Decision "${ctx.taskId}"` : 'This decision'}, ${describeCondition(path)}`;
    if (charLength(value) > FLOW_LIMITS.decisionPattern) {
      ctx.problem(path, 'too-long', `${where}: a pattern has at most ${FLOW_LIMITS.decisionPattern.toLocaleString('en-US')} characters; this has ${charLength(value).toLocaleString('en-US')}.`);
      return;
    }
    const problem = regexProblem(value);
    if (problem) ctx.problem(path, 'invalid', `${where}: not a regular expression in RE2 syntax: ${problem}.`);
  }
}

/** `branch 1, condition 2` from a path ending in `branches[0].conditions[1].value`. */
function describeCondition(path: string): string {
  const m = /branches\[(\d+)\]\.conditions\[(\d+)\]/.exec(path);
  return m ? `branch ${Number(m[1]) + 1}, condition ${Number(m[2]) + 1}` : 'a condition';
}

const stopRun: TaskTypeSpec = {
  type: 'stopRun',
  title: 'Stop run',
  kind: 'control',
  check(s, ctx) {
    s.text('reason', { what: 'a reason, for the run log' });
    if (ctx.successors.length > 0) {
      ctx.problem(
        ctx.taskPath,
        'stop-run-successor',
        `Stop run ends the run, so the tasks after it (${ctx.successors.join(', ')}) could never start; remove those connections.`,
      );
    }
    s.finish();
  },
};

const setDescription: TaskTypeSpec = {
  type: 'setDescription',
  title: 'Set description',
  kind: 'control',
  check(s) {
    s.text('description', { required: true, max: FLOW_LIMITS.runDescription, what: 'the run description' });
    s.finish();
  },
};

const wait: TaskTypeSpec = {
  type: 'wait',
  title: 'Wait',
  kind: 'control',
  check(s, ctx) {
    const key = 'seconds';
    const v = s.value[key];
    if (typeof v === 'number') {
      const n = s.integer(key, { min: 0, max: FLOW_LIMITS.taskTimeoutSeconds, required: true });
      if (n !== undefined && ctx.timeoutSeconds !== undefined && n > ctx.timeoutSeconds) {
        ctx.problem(s.at(key), 'invalid', `The wait (${n} s) is longer than the task's Timeout (${ctx.timeoutSeconds} s), so it would always time out.`);
      }
    } else {
      const text = s.text(key, { required: true, what: 'whole seconds (a number, or a ?variable)' });
      if (text !== undefined && !/^\s*\d+\s*$/.test(text) && !isSingleReference(text)) {
        ctx.problem(s.at(key), 'invalid', `Give whole seconds: a number, or a single ?variable holding one.`);
      }
    }
    s.finish();
  },
};

const sparqlQuery: TaskTypeSpec = {
  type: 'sparqlQuery',
  title: 'SPARQL query',
  kind: 'data',
  check(s, ctx) {
    const text = sparqlSource(s, 'query', ctx);
    // A saved query may name its own dataset; inline SPARQL needs one.
    const saved = isPlainObject(s.value.query) && s.value.query.savedQuery !== undefined;
    datasetRef(s, 'dataset', !saved);
    const output = s.object('output', { required: true, what: 'where results go ({ "to": "graph" | "artifact", … })' });
    const to = output?.choice('to', ['graph', 'artifact'] as const, { required: true });
    let format: 'csv' | 'json' | undefined;
    if (output && to === 'graph') {
      datasetRef(output, 'dataset', true);
      output.text('graph', { required: true, what: 'the graph name (an IRI)' });
      output.flag('overwrite');
    } else if (output && to === 'artifact') {
      format = output.choice('format', ['csv', 'json'] as const, { required: true });
      output.text('fileName', { what: 'a file name' });
    }
    output?.finish();
    const analysis = text === undefined ? undefined : analyze(text, childPath(s.at('query'), 'text'), ctx);
    if (analysis?.kind === 'update') {
      ctx.problem(childPath(s.at('query'), 'text'), 'query-form', 'This is a SPARQL update; use a SPARQL update task for it.');
    } else if (analysis && to) {
      const form = analysis.form;
      const graphForm = form === 'construct' || form === 'describe';
      if (graphForm && to !== 'graph') {
        ctx.problem(s.at('output'), 'query-form', `A ${form.toUpperCase()} query writes a graph: use "to": "graph".`);
      } else if (!graphForm && to !== 'artifact') {
        ctx.problem(s.at('output'), 'query-form', `A ${form.toUpperCase()} query gives a table: use "to": "artifact" with format csv or json.`);
      } else if (form === 'ask' && format === 'csv') {
        ctx.problem(s.at('output'), 'query-form', 'An ASK query has no CSV form: use format json.');
      }
    }
    s.finish();
  },
};

const sparqlUpdate: TaskTypeSpec = {
  type: 'sparqlUpdate',
  title: 'SPARQL update',
  kind: 'data',
  check(s, ctx) {
    const text = sparqlSource(s, 'update', ctx);
    datasetRef(s, 'dataset', true);
    const analysis = text === undefined ? undefined : analyze(text, childPath(s.at('update'), 'text'), ctx);
    if (analysis && analysis.kind !== 'update') {
      ctx.problem(childPath(s.at('update'), 'text'), 'query-form', 'This is a query, not an update; use a SPARQL query task for it.');
    }
    s.finish();
  },
};

export const LOAD_FORMATS = ['auto', 'turtle', 'trig', 'n-triples', 'n-quads', 'rdf-xml', 'json-ld', 'csv', 'tsv', 'xml'] as const;

const loadFromUrl: TaskTypeSpec = {
  type: 'loadFromUrl',
  title: 'Load from URL',
  kind: 'data',
  check(s, ctx) {
    httpUrl(s, 'url', ctx);
    datasetRef(s, 'dataset', true);
    s.text('graph', { what: 'the graph name (an IRI)' });
    s.choice('format', LOAD_FORMATS);
    s.textMap('headers', { what: 'a header value' });
    s.flag('createDataset');
    s.flag('overwrite');
    s.finish();
  },
};

const shaclValidation: TaskTypeSpec = {
  type: 'shaclValidation',
  title: 'SHACL validation',
  kind: 'data',
  check(s, ctx) {
    datasetRef(s, 'dataset', true);
    s.text('graph', { what: 'the graph to validate (an IRI)' });
    const shapes = s.object('shapes', { required: true, what: 'the shapes ({ "url" } or { "dataset", "graph"? })' });
    if (shapes) {
      if (shapes.has('url') === shapes.has('dataset')) {
        ctx.problem(shapes.path, 'invalid', 'Give exactly one of "url" or "dataset" for the shapes.');
      }
      if (shapes.has('url')) httpUrl(shapes, 'url', ctx);
      if (shapes.has('dataset')) datasetRef(shapes, 'dataset', true);
      shapes.text('graph', { what: 'the shapes graph (an IRI)' });
      shapes.finish();
    }
    s.flag('failOnViolation');
    s.finish();
  },
};

export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD'] as const;
/** Settings of the HTTP request task that name output variables for the response. */
export const HTTP_OUTPUT_SETTINGS = ['statusVariable', 'bodyVariable'] as const;

/** Whether a task sets output variables (its output's `variables` feed the tasks after it). */
export function setsVariables(task: { type: string; settings: Record<string, unknown> }): boolean {
  return task.type === 'setVariables' || (task.type === 'httpRequest' && HTTP_OUTPUT_SETTINGS.some((k) => typeof task.settings[k] === 'string'));
}

const httpRequest: TaskTypeSpec = {
  type: 'httpRequest',
  title: 'HTTP request',
  kind: 'data',
  check(s, ctx) {
    s.choice('method', HTTP_METHODS);
    httpUrl(s, 'url', ctx);
    s.textMap('headers', { what: 'a header value' });
    s.text('body', { what: 'the request body' });
    // The response's status and (bounded) body can go into output variables for later tasks.
    for (const key of HTTP_OUTPUT_SETTINGS) {
      const name = s.text(key, { what: 'the name of an output variable', references: false });
      if (name === undefined || ctx.isOutputVariable(name)) continue;
      ctx.problem(s.at(key), 'unknown-output-variable', `"${name}" is not an output variable of this flow; add it to "outputVariables" first.`);
    }
    s.finish();
  },
};

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

const sendEmail: TaskTypeSpec = {
  type: 'sendEmail',
  title: 'Send email',
  kind: 'data',
  check(s, ctx) {
    let count = 0;
    for (const key of ['to', 'cc', 'bcc']) {
      const list = s.texts(key, { what: 'email addresses' });
      list?.forEach((address, i) => {
        count++;
        if (!hasReference(address) && !EMAIL.test(address.trim())) {
          ctx.problem(childPath(s.at(key), i), 'invalid', `"${address}" is not an email address.`);
        }
      });
    }
    if (count === 0) {
      ctx.problem(s.at('to'), 'invalid', 'Give at least one recipient.');
    }
    if (count > FLOW_LIMITS.emailRecipients) {
      ctx.problem(
        s.path,
        'too-many',
        `At most ${FLOW_LIMITS.emailRecipients} recipients, counted across to, cc and bcc; this task has ${count}.`,
      );
    }
    s.text('subject', { required: true, what: 'a subject' });
    s.text('body', { required: true, max: FLOW_LIMITS.emailBody, what: 'the email body' });
    s.finish();
  },
};

const setAccessLevel: TaskTypeSpec = {
  type: 'setAccessLevel',
  title: 'Set access level',
  kind: 'data',
  check(s) {
    datasetRef(s, 'dataset', true);
    s.choice('accessLevel', ['Public', 'Internal', 'Private'] as const, { required: true, allowReference: true });
    s.finish();
  },
};

const serviceAction: TaskTypeSpec = {
  type: 'serviceAction',
  title: 'Service action',
  kind: 'data',
  check(s) {
    datasetRef(s, 'dataset', true);
    s.text('service', { required: true, what: 'the service name' });
    s.choice('action', ['start', 'stop', 'sync'] as const, { required: true });
    s.choice('serviceType', ['Sparql', 'RichSparql', 'textSearch'] as const);
    s.finish();
  },
};

export const TASK_CATALOGUE: Readonly<Record<TaskType, TaskTypeSpec>> = {
  setVariables,
  decision,
  stopRun,
  setDescription,
  wait,
  sparqlQuery,
  sparqlUpdate,
  loadFromUrl,
  shaclValidation,
  httpRequest,
  sendEmail,
  setAccessLevel,
  serviceAction,
};
