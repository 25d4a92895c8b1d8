/**
 * The flow task types and the fields of their settings forms. The API checks settings on save and
 * names each problem by its path (`tasks[1].settings.output.format`); these forms use the same
 * paths, so a problem shows on the field and task it names. Every form also has the settings as
 * JSON, for anything a field here does not cover.
 */
export type FieldKind = 'text' | 'textarea' | 'number' | 'select' | 'checkbox' | 'map' | 'json';

export interface Field {
  /** Dotted path below `settings`. */
  path: string;
  label: string;
  kind: FieldKind;
  options?: string[];
  required?: boolean;
  hint?: string;
}

export interface TaskTypeInfo {
  type: string;
  title: string;
  kind: 'control' | 'data';
  fields: Field[];
  /** Settings of a new task of this type. */
  initial: Record<string, unknown>;
}

const dataset = (path: string, what: string, required = true): Field[] => [
  { path: `${path}.account`, label: `${what}: account`, kind: 'text', required },
  { path: `${path}.dataset`, label: `${what}: dataset`, kind: 'text', required },
];

export const TASK_TYPES: TaskTypeInfo[] = [
  {
    type: 'setVariables',
    title: 'Set variables',
    kind: 'control',
    fields: [{ path: 'values', label: 'Values (name = value, one a line)', kind: 'map', required: true, hint: 'Each name must be an output variable of the flow.' }],
    initial: { values: {} },
  },
  {
    type: 'decision',
    title: 'Decision',
    kind: 'control',
    fields: [
      {
        path: 'branches',
        label: 'Branches (JSON)',
        kind: 'json',
        required: true,
        hint: '[{ "to": "<task id>", "match": "all", "conditions": [{ "variable": "name", "operator": "equals", "value": "x" }] }]',
      },
      { path: 'otherwise', label: 'Otherwise go to (task id)', kind: 'text' },
    ],
    initial: { branches: [] },
  },
  { type: 'stopRun', title: 'Stop run', kind: 'control', fields: [{ path: 'reason', label: 'Reason', kind: 'text' }], initial: {} },
  {
    type: 'setDescription',
    title: 'Set description',
    kind: 'control',
    fields: [{ path: 'description', label: 'Run description', kind: 'text', required: true }],
    initial: { description: '' },
  },
  { type: 'wait', title: 'Wait', kind: 'control', fields: [{ path: 'seconds', label: 'Seconds', kind: 'number', required: true }], initial: { seconds: 1 } },
  {
    type: 'sparqlQuery',
    title: 'SPARQL query',
    kind: 'data',
    fields: [
      { path: 'query.text', label: 'SPARQL query', kind: 'textarea', required: true },
      ...dataset('dataset', 'Query dataset'),
      { path: 'output.to', label: 'Results go to', kind: 'select', options: ['artifact', 'graph'], required: true },
      { path: 'output.format', label: 'File format (artifact)', kind: 'select', options: ['', 'csv', 'json'] },
      { path: 'output.fileName', label: 'File name (artifact)', kind: 'text' },
      { path: 'output.graph', label: 'Graph (graph)', kind: 'text' },
    ],
    initial: { query: { text: 'SELECT * WHERE { ?s ?p ?o } LIMIT 10' }, output: { to: 'artifact', format: 'csv' } },
  },
  {
    type: 'sparqlUpdate',
    title: 'SPARQL update',
    kind: 'data',
    fields: [{ path: 'update.text', label: 'SPARQL update', kind: 'textarea', required: true }, ...dataset('dataset', 'Dataset')],
    initial: { update: { text: '' } },
  },
  {
    type: 'loadFromUrl',
    title: 'Load from URL',
    kind: 'data',
    fields: [
      { path: 'url', label: 'URL', kind: 'text', required: true },
      ...dataset('dataset', 'Into dataset'),
      { path: 'graph', label: 'Graph', kind: 'text' },
      { path: 'overwrite', label: 'Overwrite the graph', kind: 'checkbox' },
    ],
    initial: { url: '' },
  },
  {
    type: 'shaclValidation',
    title: 'SHACL validation',
    kind: 'data',
    fields: [...dataset('dataset', 'Dataset'), { path: 'graph', label: 'Graph to validate', kind: 'text' }, { path: 'shapes', label: 'Shapes (JSON)', kind: 'json', required: true }],
    initial: { shapes: {} },
  },
  {
    type: 'httpRequest',
    title: 'HTTP request',
    kind: 'data',
    fields: [
      { path: 'url', label: 'URL', kind: 'text', required: true },
      { path: 'method', label: 'Method', kind: 'select', options: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] },
      { path: 'headers', label: 'Headers (name = value, one a line)', kind: 'map' },
      { path: 'body', label: 'Body', kind: 'textarea' },
    ],
    initial: { url: '', method: 'GET' },
  },
  {
    type: 'sendEmail',
    title: 'Send email',
    kind: 'data',
    fields: [
      { path: 'to', label: 'To (JSON list of addresses)', kind: 'json', required: true },
      { path: 'subject', label: 'Subject', kind: 'text', required: true },
      { path: 'body', label: 'Body', kind: 'textarea', required: true },
    ],
    initial: { to: [], subject: '', body: '' },
  },
  {
    type: 'setAccessLevel',
    title: 'Set access level',
    kind: 'data',
    fields: [...dataset('dataset', 'Dataset'), { path: 'accessLevel', label: 'Access level', kind: 'select', options: ['Private', 'Internal', 'Public'], required: true }],
    initial: { accessLevel: 'Private' },
  },
  {
    type: 'serviceAction',
    title: 'Service action',
    kind: 'data',
    fields: [
      ...dataset('dataset', 'Dataset'),
      { path: 'service', label: 'Service name', kind: 'text', required: true },
      { path: 'action', label: 'Action', kind: 'select', options: ['start', 'stop', 'sync'], required: true },
    ],
    initial: { action: 'sync' },
  },
];

export const typeInfo = (type: string): TaskTypeInfo | undefined => TASK_TYPES.find((t) => t.type === type);

export function getPath(obj: Record<string, unknown>, path: string): unknown {
  return path.split('.').reduce<unknown>((o, k) => (o && typeof o === 'object' ? (o as Record<string, unknown>)[k] : undefined), obj);
}

/** A copy of `obj` with `path` set (or removed when `value` is undefined or ''); empty objects left behind go too. */
export function setPath(obj: Record<string, unknown>, path: string, value: unknown): Record<string, unknown> {
  const [head, ...rest] = path.split('.');
  const out = { ...obj };
  if (rest.length === 0) {
    if (value === undefined || value === '') delete out[head!];
    else out[head!] = value;
    return out;
  }
  const child = out[head!] && typeof out[head!] === 'object' ? (out[head!] as Record<string, unknown>) : {};
  const next = setPath(child, rest.join('.'), value);
  if (Object.keys(next).length === 0) delete out[head!];
  else out[head!] = next;
  return out;
}
