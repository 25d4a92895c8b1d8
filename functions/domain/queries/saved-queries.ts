import type { AccountRecord } from '../accounts/accounts.js';
import { accountView } from '../accounts/accounts.js';
import type { DatasetRecord } from '../datasets/datasets.js';
import { datasetView } from '../datasets/datasets.js';
import { ValidationError } from '../shared/errors.js';

import type { QueryVariable, SavedQueryRecord, QueryVersionRecord } from '../../ports/records/queries.js';

// The stored records are types of the ports (ports/records); re-exported for the domain's importers.
export type { QueryServiceType, QueryVariable, QueryVersionRecord, SavedQueryRecord } from '../../ports/records/queries.js';

const QUERY_NAME = /^[a-zA-Z0-9][a-zA-Z0-9-]{0,39}$/;
const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
export const MAX_QUERY_CHARS = 100_000;
export const MAX_VARIABLES = 50;

export function assertQueryName(name: unknown, field = 'name'): string {
  if (typeof name !== 'string' || !QUERY_NAME.test(name)) {
    throw new ValidationError(`${field}: a query name has 1 to 40 letters, digits or hyphens and starts with a letter or digit.`);
  }
  return name;
}

/** Validates API variables: names, term types, and defaults that fit their own rules. */
export function checkVariables(variables: QueryVariable[]): QueryVariable[] {
  if (variables.length > MAX_VARIABLES) throw new ValidationError(`variables: at most ${MAX_VARIABLES}.`);
  const seen = new Set<string>();
  return variables.map((v, i) => {
    if (!VARIABLE_NAME.test(v.name)) throw new ValidationError(`variables[${i}].name: use letters, digits and underscores, starting with a letter or underscore.`);
    if (seen.has(v.name)) throw new ValidationError(`variables[${i}].name: "${v.name}" is defined twice.`);
    seen.add(v.name);
    if (v.termType === 'NamedNode' && (v.datatype || v.language)) {
      throw new ValidationError(`variables[${i}]: a NamedNode variable has no datatype or language.`);
    }
    if (v.datatype && v.language) throw new ValidationError(`variables[${i}]: give a datatype or a language, not both.`);
    const checked = { ...v, required: v.required ?? false, allowedValues: v.allowedValues ?? [] };
    if (checked.defaultValue !== undefined) termValue(checked, checked.defaultValue);
    return checked;
  });
}

/** The term a text value stands for, or a 400 naming the variable. */
export function termValue(v: QueryVariable, value: string) {
  if (v.allowedValues.length > 0 && !v.allowedValues.includes(value)) {
    throw new ValidationError(`${v.name}: "${value}" is not allowed; use one of ${v.allowedValues.join(', ')}.`);
  }
  if (v.termType === 'NamedNode') {
    let ok = false;
    try {
      ok = /^[a-z][a-z0-9+.-]*:/i.test(value) && !/[\s<>"{}|\\^`]/.test(value) && Boolean(new URL(value));
    } catch {
      ok = false;
    }
    if (!ok) throw new ValidationError(`${v.name}: "${value}" is not an absolute IRI, and this variable takes an IRI.`);
    return { termType: 'NamedNode' as const, value };
  }
  return { termType: 'Literal' as const, value, datatype: v.datatype, language: v.language };
}

/** The query text with `#+` annotation lines, as the spec's text representation. */
export function annotatedText(description: string, endpoint: string, query: string): string {
  const lines = [
    ...description.split('\n').filter(Boolean).map((line) => `#+ description: ${line}`),
    `#+ endpoint: ${endpoint}`,
    '#+ endpoint_in_url: false',
  ];
  return `${lines.join('\n')}\n\n${query}\n`;
}

export function savedQueryView(
  q: SavedQueryRecord,
  v: QueryVersionRecord,
  owner: AccountRecord,
  dataset: { dataset: DatasetRecord; owner: AccountRecord } | null,
  urls: { query: string; endpoint: string },
): Record<string, unknown> {
  return {
    id: q.id,
    name: q.name,
    displayName: q.displayName,
    description: q.description,
    accessLevel: q.accessLevel,
    owner: accountView(owner),
    dataset: dataset ? datasetView(dataset.dataset, dataset.owner) : undefined,
    service: urls.endpoint,
    serviceConfig: { type: q.serviceType },
    tags: q.tags,
    link: urls.query,
    version: v.version,
    numberOfVersions: q.numberOfVersions,
    requestConfig: { payload: { query: v.query }, headers: v.headers, ldFrame: v.ldFrame },
    renderConfig: v.renderConfig,
    variables: v.variables,
    createdAt: q.createdAt,
    updatedAt: q.updatedAt,
  };
}
