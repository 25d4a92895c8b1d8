/**
 * A flow definition as Turtle: `GET /flows/blueprints/{account}/{flow}/download.ttl` writes it,
 * and the same Turtle pastes back into a new flow, on this instance or another.
 *
 * The vocabulary (prefix `flow:`, {@link FLOW_VOCABULARY}):
 *
 * - `<flowIri> a flow:Flow`: `flow:id`, `flow:name`, `flow:description`, `flow:accessLevel`
 *   ("Private" | "Internal"), `flow:formatVersion`; it links its parts with `flow:task`,
 *   `flow:connection`, `flow:variable`, `flow:outputVariable`, `flow:maskedValue`, `flow:preset`.
 * - `<flowIri>/tasks/<id> a flow:Task`: `flow:taskId`, `flow:label`, `flow:taskType`,
 *   `flow:timeoutSeconds` (xsd:integer, optional), `flow:settings` (one `rdf:JSON` literal, keys
 *   sorted: settings are free-form nested JSON).
 * - `<flowIri>/connections/<from>-<to> a flow:Connection`: `flow:from`, `flow:to` (task resources).
 * - `<flowIri>/variables/<name> a flow:Variable`: `flow:variableName`, `flow:description`,
 *   `flow:required` (xsd:boolean), `flow:allowedOptions` (an rdf:List of texts, in order).
 * - `<flowIri>/outputVariables/<name> a flow:OutputVariable` and
 *   `<flowIri>/maskedValues/<name> a flow:MaskedValue`: `flow:variableName`, `flow:description`.
 *   Masked values are names only: their values never travel with a flow.
 * - `<flowIri>/presets/<name> a flow:Preset`: `flow:name`, `flow:default` (xsd:boolean),
 *   `flow:values` (one `rdf:JSON` object literal, keys sorted).
 * - Every part has `flow:position` (xsd:integer, from 1): lists keep their order.
 * - Prefixes `task:`, `variable:`, … abbreviate the parts' IRIs (`task:load`).
 *
 * `flowToTurtle` is deterministic (same flow, same IRI → byte-identical text). `flowFromTurtle`
 * never relies on the IRIs (the text may come from another instance): it finds the one
 * `flow:Flow` resource and follows its links, and returns the plain JSON definition for
 * `validateFlow`, which checks the rest. What the Turtle itself gets wrong (syntax, no flow or
 * several, malformed JSON literals or lists, misspelt `flow:` properties) is a ValidationError.
 */
import { DataFactory, Parser, Writer } from 'n3';
import type * as RDF from 'n3';
import { ValidationError } from '../../shared/errors.js';
import type { FlowDefinition } from './model.js';

export const FLOW_VOCABULARY = 'https://w3id.org/linked-data-platform/flows#';

const RDF_NS = 'http://www.w3.org/1999/02/22-rdf-syntax-ns#';
const XSD_NS = 'http://www.w3.org/2001/XMLSchema#';
const RDF_TYPE = `${RDF_NS}type`;
const RDF_JSON = `${RDF_NS}JSON`;
const RDF_FIRST = `${RDF_NS}first`;
const RDF_REST = `${RDF_NS}rest`;
const RDF_NIL = `${RDF_NS}nil`;
const XSD_INTEGER = `${XSD_NS}integer`;
const XSD_BOOLEAN = `${XSD_NS}boolean`;
const XSD_STRING = `${XSD_NS}string`;

/** Base for relative IRIs of pasted Turtle without `@base`; only identity matters, never the IRI. */
const DEFAULT_PASTE_BASE = 'https://paste.invalid/';

const F = {
  Flow: 'Flow',
  Task: 'Task',
  Connection: 'Connection',
  Variable: 'Variable',
  OutputVariable: 'OutputVariable',
  MaskedValue: 'MaskedValue',
  Preset: 'Preset',
  id: 'id',
  name: 'name',
  description: 'description',
  accessLevel: 'accessLevel',
  formatVersion: 'formatVersion',
  task: 'task',
  connection: 'connection',
  variable: 'variable',
  outputVariable: 'outputVariable',
  maskedValue: 'maskedValue',
  preset: 'preset',
  position: 'position',
  taskId: 'taskId',
  label: 'label',
  taskType: 'taskType',
  timeoutSeconds: 'timeoutSeconds',
  settings: 'settings',
  from: 'from',
  to: 'to',
  variableName: 'variableName',
  required: 'required',
  allowedOptions: 'allowedOptions',
  default: 'default',
  values: 'values',
} as const;

const { namedNode, literal } = DataFactory;
const flowTerm = (local: string) => namedNode(FLOW_VOCABULARY + local);

// ---------------------------------------------------------------------------------------------
// Writing

/** Writes `flow` as Turtle, the flow being `flowIri` and its parts IRIs under it. */
export function flowToTurtle(flow: FlowDefinition, options: { flowIri: string }): string {
  const under = options.flowIri.replace(/\/+$/, '');
  const tasks = flow.tasks ?? [];
  const connections = flow.connections ?? [];
  const variables = flow.variables ?? [];
  const outputVariables = flow.outputVariables ?? [];
  const maskedValues = flow.maskedValues ?? [];
  const presets = flow.presets ?? [];

  // A prefix per kind of part (only for kinds the flow has), so the parts read `task:load`.
  const prefixes: Record<string, string> = { flow: FLOW_VOCABULARY, rdf: RDF_NS, xsd: XSD_NS };
  const kinds: [string, string, unknown[]][] = [
    ['variable', 'variables', variables],
    ['outputVariable', 'outputVariables', outputVariables],
    ['maskedValue', 'maskedValues', maskedValues],
    ['preset', 'presets', presets],
    ['task', 'tasks', tasks],
    ['connection', 'connections', connections],
  ];
  for (const [prefix, kind, list] of kinds) if (list.length > 0) prefixes[prefix] = `${under}/${kind}/`;
  const writer = new Writer({ prefixes });

  const root = namedNode(options.flowIri);
  const part = (kind: string, key: string) => namedNode(`${under}/${kind}/${encodeURIComponent(key)}`);
  const taskIri = (id: string) => part('tasks', id);

  type Obj = RDF.Quad_Object;
  const add = (s: RDF.Quad_Subject, p: string, o: Obj) => writer.addQuad(s, flowTerm(p), o);
  const text = (v: string) => literal(v);
  const integer = (v: number) => literal(String(v), namedNode(XSD_INTEGER));
  const boolean = (v: boolean) => literal(String(v), namedNode(XSD_BOOLEAN));
  const json = (v: unknown) => literal(canonicalJson(v), namedNode(RDF_JSON));
  const typed = (s: RDF.Quad_Subject, type: string) => writer.addQuad(s, namedNode(RDF_TYPE), flowTerm(type));
  /** A part of the flow: its type and its place in its list (lists keep their order). */
  const member = (s: RDF.Quad_Subject, type: string, index: number) => {
    typed(s, type);
    add(s, F.position, integer(index + 1));
    return s;
  };
  const describedAs = (s: RDF.Quad_Subject, description: string | undefined) => {
    if (description) add(s, F.description, text(description));
  };

  // Task ids hold no `-`, so `<from>-<to>` names a connection unambiguously.
  const connectionIri = (c: { from: string; to: string }) => part('connections', `${c.from}-${c.to}`);

  typed(root, F.Flow);
  add(root, F.id, text(flow.id));
  add(root, F.name, text(flow.name));
  describedAs(root, flow.description);
  add(root, F.accessLevel, text(flow.accessLevel));
  add(root, F.formatVersion, integer(flow.formatVersion ?? 1));
  for (const v of variables) add(root, F.variable, part('variables', v.name));
  for (const v of outputVariables) add(root, F.outputVariable, part('outputVariables', v.name));
  for (const m of maskedValues) add(root, F.maskedValue, part('maskedValues', m.name));
  for (const p of presets) add(root, F.preset, part('presets', p.name));
  for (const t of tasks) add(root, F.task, taskIri(t.id));
  for (const c of connections) add(root, F.connection, connectionIri(c));

  variables.forEach((v, i) => {
    const s = member(part('variables', v.name), F.Variable, i);
    add(s, F.variableName, text(v.name));
    describedAs(s, v.description);
    add(s, F.required, boolean(v.required ?? false));
    const options = v.allowedOptions ?? [];
    if (options.length > 0) add(s, F.allowedOptions, writer.list(options.map(text)) as unknown as Obj);
  });
  outputVariables.forEach((v, i) => {
    const s = member(part('outputVariables', v.name), F.OutputVariable, i);
    add(s, F.variableName, text(v.name));
    describedAs(s, v.description);
  });
  // Names and descriptions only, whatever else the object may carry: masked values stay apart.
  maskedValues.forEach((m, i) => {
    const s = member(part('maskedValues', m.name), F.MaskedValue, i);
    add(s, F.variableName, text(m.name));
    describedAs(s, m.description);
  });
  presets.forEach((p, i) => {
    const s = member(part('presets', p.name), F.Preset, i);
    add(s, F.name, text(p.name));
    add(s, F.default, boolean(p.default ?? false));
    add(s, F.values, json(p.values ?? {}));
  });
  tasks.forEach((t, i) => {
    const s = member(taskIri(t.id), F.Task, i);
    add(s, F.taskId, text(t.id));
    add(s, F.label, text(t.label));
    add(s, F.taskType, text(t.type));
    if (t.timeoutSeconds !== undefined) add(s, F.timeoutSeconds, integer(t.timeoutSeconds));
    add(s, F.settings, json(t.settings ?? {}));
  });
  connections.forEach((c, i) => {
    const s = member(connectionIri(c), F.Connection, i);
    add(s, F.from, taskIri(c.from));
    add(s, F.to, taskIri(c.to));
  });

  let turtle = '';
  writer.end((error, result) => {
    if (error) throw error;
    turtle = result;
  });
  return turtle;
}

/** JSON with object keys sorted at every depth, no whitespace: one flow, one text. */
function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    const sorted: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) sorted[key] = sortKeys((value as Record<string, unknown>)[key]);
    return sorted;
  }
  return value;
}

// ---------------------------------------------------------------------------------------------
// Reading

/**
 * The plain JSON definition described by `text` (Turtle), to be given to `validateFlow`.
 * `baseIri` only resolves relative IRIs; the result never depends on it.
 */
export function flowFromTurtle(text: string, options: { baseIri?: string } = {}): unknown {
  let quads: RDF.Quad[];
  try {
    quads = new Parser({ format: 'text/turtle', baseIRI: options.baseIri ?? DEFAULT_PASTE_BASE }).parse(text);
  } catch (error) {
    const err = error as Error & { context?: { line?: number } };
    const message = err.message ?? String(error);
    const line = err.context?.line;
    const where = line !== undefined && !/\bline \d+/.test(message) ? ` (line ${line})` : '';
    throw new ValidationError(`The Turtle has a syntax error: ${message}${where} Fix it and paste again.`);
  }
  const graph = new Graph(quads);

  const flows = graph.subjectsOfType(FLOW_VOCABULARY + F.Flow);
  if (flows.length === 0) {
    throw new ValidationError(
      `No flow found: the Turtle must describe one resource of type flow:Flow (<${FLOW_VOCABULARY}${F.Flow}>), ` +
        `with the prefix flow: <${FLOW_VOCABULARY}>. Paste a flow downloaded as Turtle.`,
    );
  }
  if (flows.length > 1) {
    throw new ValidationError(
      `The Turtle describes ${flows.length} flows (${flows.map(show).join(', ')}); paste one flow at a time.`,
    );
  }
  const root = new Node(graph, flows[0]!, 'The flow');
  root.only([F.id, F.name, F.description, F.accessLevel, F.formatVersion, F.task, F.connection, F.variable, F.outputVariable, F.maskedValue, F.preset]);

  const out: Record<string, unknown> = {};
  const set = (target: Record<string, unknown>, key: string, value: unknown) => {
    if (value !== undefined) target[key] = value;
  };
  set(out, 'formatVersion', root.value(F.formatVersion));
  set(out, 'id', root.value(F.id));
  set(out, 'name', root.value(F.name));
  set(out, 'description', root.value(F.description));
  set(out, 'accessLevel', root.value(F.accessLevel));

  const taskIds = new Map<string, unknown>();
  const tasks = root.parts(F.task, 'Task', F.taskId).map((task) => {
    task.only([F.position, F.taskId, F.label, F.taskType, F.timeoutSeconds, F.settings]);
    const item: Record<string, unknown> = {};
    set(item, 'id', task.value(F.taskId));
    if (item.id !== undefined) taskIds.set(key(task.term), item.id);
    return { task, item };
  });
  for (const { task, item } of tasks) {
    set(item, 'label', task.value(F.label));
    set(item, 'type', task.value(F.taskType));
    set(item, 'settings', task.json(F.settings));
    set(item, 'timeoutSeconds', task.value(F.timeoutSeconds));
  }

  const variables = root.parts(F.variable, 'Variable', F.variableName).map((v) => {
    v.only([F.position, F.variableName, F.description, F.required, F.allowedOptions]);
    const item: Record<string, unknown> = {};
    set(item, 'name', v.value(F.variableName));
    set(item, 'description', v.value(F.description));
    set(item, 'required', v.value(F.required));
    set(item, 'allowedOptions', v.list(F.allowedOptions));
    return item;
  });
  const named = (property: string, what: string) =>
    root.parts(property, what, F.variableName).map((v) => {
      v.only([F.position, F.variableName, F.description]);
      const item: Record<string, unknown> = {};
      set(item, 'name', v.value(F.variableName));
      set(item, 'description', v.value(F.description));
      return item;
    });
  const outputVariables = named(F.outputVariable, 'Output variable');
  const maskedValues = named(F.maskedValue, 'Masked value');
  const presets = root.parts(F.preset, 'Preset', F.name).map((p) => {
    p.only([F.position, F.name, F.default, F.values]);
    const item: Record<string, unknown> = {};
    set(item, 'name', p.value(F.name));
    set(item, 'values', p.json(F.values));
    set(item, 'default', p.value(F.default));
    return item;
  });
  const connections = root.parts(F.connection, 'Connection').map((c) => {
    c.only([F.position, F.from, F.to]);
    const item: Record<string, unknown> = {};
    for (const end of [F.from, F.to] as const) {
      const term = c.one(end);
      if (!term) continue;
      if (term.termType === 'Literal') {
        item[end] = term.value; // a hand-written task id
      } else if (taskIds.has(key(term))) {
        item[end] = taskIds.get(key(term));
      } else {
        throw new ValidationError(
          `${c.what}: flow:${end} points to ${show(term)}, which is not a task of the flow (linked with flow:task and given a flow:taskId); point it to one of the flow's tasks.`,
        );
      }
    }
    return item;
  });

  out.variables = variables;
  out.outputVariables = outputVariables;
  out.maskedValues = maskedValues;
  out.presets = presets;
  out.tasks = tasks.map((t) => t.item);
  out.connections = connections;
  return out;
}

type Term = RDF.Quad_Subject | RDF.Quad_Object;
type AnyTerm = RDF.Term | RDF.Quad_Subject | RDF.Quad_Object;

function key(term: AnyTerm): string {
  return term.termType === 'BlankNode' ? `_:${term.value}` : term.termType === 'NamedNode' ? `<${term.value}>` : JSON.stringify(term);
}

function show(term: AnyTerm): string {
  if (term.termType === 'NamedNode') return `<${term.value}>`;
  if (term.termType === 'BlankNode') return 'a blank node';
  if (term.termType === 'Literal') return JSON.stringify(term.value);
  return term.value;
}

function shortName(predicate: string): string {
  if (predicate.startsWith(FLOW_VOCABULARY)) return `flow:${predicate.slice(FLOW_VOCABULARY.length)}`;
  if (predicate.startsWith(RDF_NS)) return `rdf:${predicate.slice(RDF_NS.length)}`;
  return `<${predicate}>`;
}

/** Triples by subject, in document order. */
class Graph {
  private readonly bySubject = new Map<string, RDF.Quad[]>();
  private readonly typed: RDF.Quad[] = [];

  constructor(quads: RDF.Quad[]) {
    for (const q of quads) {
      if (q.graph.termType !== 'DefaultGraph') continue;
      const k = key(q.subject);
      let list = this.bySubject.get(k);
      if (!list) this.bySubject.set(k, (list = []));
      list.push(q);
      if (q.predicate.value === RDF_TYPE) this.typed.push(q);
    }
  }

  about(term: AnyTerm): RDF.Quad[] {
    return this.bySubject.get(key(term)) ?? [];
  }

  subjectsOfType(type: string): RDF.Quad_Subject[] {
    const seen = new Map<string, RDF.Quad_Subject>();
    for (const q of this.typed) if (q.object.value === type && q.object.termType === 'NamedNode') seen.set(key(q.subject), q.subject);
    return [...seen.values()];
  }
}

/** One resource of the flow, read with messages that name it. */
class Node {
  constructor(
    readonly graph: Graph,
    readonly term: Term,
    /** E.g. `Task <https://…/tasks/load>`, for messages. */
    readonly what: string,
  ) {}

  objects(local: string): RDF.Quad_Object[] {
    const predicate = FLOW_VOCABULARY + local;
    const seen = new Map<string, RDF.Quad_Object>();
    for (const q of this.graph.about(this.term)) if (q.predicate.value === predicate) seen.set(key(q.object), q.object);
    return [...seen.values()];
  }

  /** The single object of `flow:<local>`, if any. */
  one(local: string): RDF.Quad_Object | undefined {
    const objects = this.objects(local);
    if (objects.length > 1) {
      throw new ValidationError(`${this.what} has ${objects.length} values for flow:${local} (${objects.map(show).join(', ')}); keep one.`);
    }
    return objects[0];
  }

  /** A literal as JSON: integers and booleans as such (when well-formed), anything else as text. */
  value(local: string): unknown {
    const term = this.one(local);
    if (!term) return undefined;
    if (term.termType !== 'Literal') {
      throw new ValidationError(`${this.what}: flow:${local} must be a literal such as "text", not ${show(term)}.`);
    }
    const datatype = term.datatype.value;
    if (datatype === XSD_INTEGER || (datatype.startsWith(XSD_NS) && /^(int|long|short|byte|nonNegativeInteger|positiveInteger|unsignedInt|unsignedLong|unsignedShort|unsignedByte)$/.test(datatype.slice(XSD_NS.length)))) {
      if (/^[+-]?\d+$/.test(term.value.trim())) return Number(term.value.trim());
    } else if (datatype === XSD_BOOLEAN) {
      const v = term.value.trim();
      if (v === 'true' || v === '1') return true;
      if (v === 'false' || v === '0') return false;
    }
    return term.value;
  }

  /** An `rdf:JSON` literal (or a plain text holding JSON), parsed. */
  json(local: string): unknown {
    const term = this.one(local);
    if (!term) return undefined;
    const hint = `write it as a JSON literal, e.g. flow:${local} "{\\"name\\": \\"value\\"}"^^rdf:JSON`;
    if (term.termType !== 'Literal' || (term.datatype.value !== RDF_JSON && term.datatype.value !== XSD_STRING)) {
      throw new ValidationError(`${this.what}: flow:${local} must be an rdf:JSON literal, not ${show(term)}; ${hint}.`);
    }
    try {
      return JSON.parse(term.value);
    } catch (error) {
      throw new ValidationError(`${this.what}: flow:${local} is not valid JSON (${(error as Error).message}); ${hint}.`);
    }
  }

  /** An rdf:List of texts (or an rdf:JSON list literal), in order. */
  list(local: string): unknown[] | undefined {
    const head = this.one(local);
    if (!head) return undefined;
    if (head.termType === 'Literal') {
      if (head.datatype.value === RDF_JSON) return this.json(local) as unknown[];
      return [head.value];
    }
    const items: unknown[] = [];
    const visited = new Set<string>();
    let node: AnyTerm = head;
    const bad = (why: string) =>
      new ValidationError(`${this.what}: flow:${local} is not a well-formed list (${why}); write it as ("first" "second").`);
    while (!(node.termType === 'NamedNode' && node.value === RDF_NIL)) {
      if (visited.has(key(node))) throw bad('it loops');
      visited.add(key(node));
      const quads = this.graph.about(node);
      const firsts = quads.filter((q) => q.predicate.value === RDF_FIRST);
      const rests = quads.filter((q) => q.predicate.value === RDF_REST);
      if (firsts.length !== 1 || rests.length !== 1) throw bad(`${show(node)} needs exactly one rdf:first and one rdf:rest`);
      const first = firsts[0]!.object;
      if (first.termType !== 'Literal') throw bad(`${show(first)} is not a text`);
      items.push(first.value);
      node = rests[0]!.object;
    }
    return items;
  }

  /** Refuses misspelt `flow:` properties (other vocabularies are left alone). */
  only(locals: string[]): void {
    for (const q of this.graph.about(this.term)) {
      const p = q.predicate.value;
      if (p.startsWith(FLOW_VOCABULARY) && !locals.includes(p.slice(FLOW_VOCABULARY.length))) {
        throw new ValidationError(`${this.what} has an unknown property ${shortName(p)}; remove it or check its spelling (${locals.map((l) => `flow:${l}`).join(', ')}).`);
      }
    }
  }

  /**
   * The resources linked by `flow:<local>`, ordered by their `flow:position` (then document
   * order); messages name each by its `flow:<naming>` (e.g. `Task "load"`), else by its IRI.
   */
  parts(local: string, what: string, naming?: string): Node[] {
    const nodes = this.objects(local).map((term) => {
      if (term.termType === 'Literal') {
        throw new ValidationError(`${this.what}: flow:${local} must point to a resource describing the ${what.toLowerCase()}, not ${show(term)}.`);
      }
      const name = naming && this.graph.about(term).find((q) => q.predicate.value === FLOW_VOCABULARY + naming && q.object.termType === 'Literal');
      return new Node(this.graph, term as Term, `${what} ${name ? JSON.stringify(name.object.value) : show(term)}`);
    });
    const positions = nodes.map((node) => {
      const position = node.value(F.position);
      if (position === undefined) return Number.POSITIVE_INFINITY;
      if (typeof position !== 'number') {
        throw new ValidationError(`${node.what}: flow:position must be a whole number (1, 2, …), not ${JSON.stringify(position)}.`);
      }
      return position;
    });
    return nodes
      .map((node, i) => ({ node, position: positions[i]! }))
      .sort((a, b) => (a.position === b.position ? 0 : a.position < b.position ? -1 : 1))
      .map(({ node }) => node);
  }
}
