import { ValidationError } from '../shared/errors.js';
import type { FieldModel, SchemaModel, TypeModel } from './shapes.js';
import { iri, literal } from './sparql-text.js';

/**
 * A connection's `filter`, `orderBy`, `first` and `after` → the SPARQL SELECT of its page of
 * nodes. Filters: `id` (the node's IRI), per field `eq` / `in` / `notEq` / `notIn` (values compare
 * as RDF terms of the field's datatype; `notEq` and `notIn` hold when no value matches), a nested
 * filter through object fields, `OR` (any of a list) and `NOT`; keys of one object combine with AND.
 */

export type FilterInput = Record<string, unknown>;
export interface OrderInput {
  field: string;
  direction?: 'ASC' | 'DESC';
}

/** Nesting of filters (OR, NOT, object fields) a query may use. */
export const MAX_FILTER_DEPTH = 12;

class Vars {
  private n = 0;
  next(): string {
    return `?v${this.n++}`;
  }
}

interface LangValue {
  value: string;
  language?: string | null;
}

const and = (parts: string[]): string | null => (parts.length === 0 ? null : parts.length === 1 ? parts[0]! : `(${parts.join(' && ')})`);

/**
 * "Some value of the field is one of `values`": one EXISTS with the values in a VALUES block
 * (flat, however long the list: a chain of `||` nests in the engine's parser and overflows it).
 * Language strings without a language compare by their text in any language.
 */
function someValueIn(field: FieldModel, subject: string, values: unknown[], vars: Vars): string {
  if (values.length === 0) return 'false';
  const p = iri(field.path, 'path');
  if (field.value.kind === 'langString') {
    const tagged = (values as LangValue[]).filter((v) => v.language);
    const plain = (values as LangValue[]).filter((v) => !v.language);
    const parts: string[] = [];
    if (tagged.length > 0) {
      const v = vars.next();
      parts.push(`EXISTS { VALUES ${v} { ${tagged.map((t) => literal(t.value, { language: t.language! })).join(' ')} } ${subject} ${p} ${v} }`);
    }
    if (plain.length > 0) {
      const v = vars.next();
      parts.push(`EXISTS { ${subject} ${p} ${v} . FILTER(isLiteral(${v}) && STR(${v}) IN (${plain.map((t) => literal(t.value)).join(', ')})) }`);
    }
    return parts.length === 1 ? parts[0]! : `(${parts.join(' || ')})`;
  }
  const terms = values.map((value) => (field.value.kind === 'scalar' ? literal(String(value), { datatype: field.value.datatype }) : iri(String(value), field.name)));
  if (terms.length === 1) return `EXISTS { ${subject} ${p} ${terms[0]} }`;
  const v = vars.next();
  return `EXISTS { VALUES ${v} { ${terms.join(' ')} } ${subject} ${p} ${v} }`;
}

function fieldCondition(model: SchemaModel, field: FieldModel, subject: string, input: Record<string, unknown>, vars: Vars, depth: number): string | null {
  if (field.value.kind === 'object') {
    const target = model.types.find((t) => t.name === (field.value as { type: string }).type)!;
    const o = vars.next();
    const inner = filterCondition(model, target, o, input, vars, depth + 1);
    return `EXISTS { ${subject} ${iri(field.path, 'path')} ${o} .${inner ? ` FILTER(${inner})` : ''} }`;
  }
  if (field.value.kind === 'iri') return typeof input.id === 'string' ? someValueIn(field, subject, [input.id], vars) : null;
  const parts: string[] = [];
  if (input.eq !== undefined && input.eq !== null) parts.push(someValueIn(field, subject, [input.eq], vars));
  if (Array.isArray(input.in)) parts.push(someValueIn(field, subject, input.in, vars));
  if (input.notEq !== undefined && input.notEq !== null) parts.push(`!${someValueIn(field, subject, [input.notEq], vars)}`);
  if (Array.isArray(input.notIn)) parts.push(`!${someValueIn(field, subject, input.notIn, vars)}`);
  return and(parts);
}

/** The condition `filter` puts on the node in `subject`, or null when it puts none. */
export function filterCondition(model: SchemaModel, type: TypeModel, subject: string, filter: FilterInput, vars: Vars, depth = 0): string | null {
  if (depth > MAX_FILTER_DEPTH) throw new ValidationError(`filter: nested more than ${MAX_FILTER_DEPTH} levels deep; simplify it.`);
  const parts: string[] = [];
  for (const [name, input] of Object.entries(filter)) {
    if (input === undefined || input === null) continue;
    if (name === 'id') parts.push(`sameTerm(${subject}, ${iri(String(input), 'filter.id')})`);
    else if (name === 'OR') {
      const alternatives = (input as FilterInput[]).map((f) => filterCondition(model, type, subject, f, vars, depth + 1) ?? 'true');
      parts.push(alternatives.length === 0 ? 'false' : `(${alternatives.join(' || ')})`);
    } else if (name === 'NOT') parts.push(`!(${filterCondition(model, type, subject, input as FilterInput, vars, depth + 1) ?? 'true'})`);
    else {
      const field = type.fields.find((f) => f.name === name);
      if (!field) throw new ValidationError(`filter: type "${type.name}" has no field "${name}".`);
      const condition = fieldCondition(model, field, subject, input as Record<string, unknown>, vars, depth);
      if (condition) parts.push(condition);
    }
  }
  return and(parts);
}

/** Page size when `first` is not given, and the largest a query may ask for. */
export const DEFAULT_PAGE_SIZE = 100;
export const MAX_PAGE_SIZE = 1000;

const CURSOR_PREFIX = 'o:';
export const cursorOf = (position: number): string => Buffer.from(`${CURSOR_PREFIX}${position}`).toString('base64url');

export function positionOf(cursor: string): number {
  const text = Buffer.from(cursor, 'base64url').toString();
  const position = Number(text.slice(CURSOR_PREFIX.length));
  if (!text.startsWith(CURSOR_PREFIX) || !Number.isSafeInteger(position) || position < 0 || cursorOf(position) !== cursor) {
    throw new ValidationError(`after: "${cursor.slice(0, 60)}" is not a cursor of this endpoint; pass an edge's cursor or pageInfo.endCursor.`);
  }
  return position;
}

export interface PageRequest {
  first?: number | null;
  after?: string | null;
  filter?: FilterInput | null;
  orderBy?: OrderInput[] | null;
}

/** The SELECT of a page: `?s` per node, one row more than the page to tell whether another follows. */
export function pageQuery(model: SchemaModel, type: TypeModel, request: PageRequest): { sparql: string; offset: number; size: number } {
  const size = request.first ?? DEFAULT_PAGE_SIZE;
  if (!Number.isInteger(size) || size < 0 || size > MAX_PAGE_SIZE) throw new ValidationError(`first: give a number of nodes from 0 to ${MAX_PAGE_SIZE}.`);
  const offset = request.after ? positionOf(request.after) + 1 : 0;
  const vars = new Vars();
  const condition = request.filter ? filterCondition(model, type, '?s', request.filter, vars) : null;
  const where = `?s a ${iri(type.classIri, 'class')} .${condition ? ` FILTER(${condition})` : ''}`;
  const orders = request.orderBy ?? [];
  const page = `LIMIT ${size + 1}${offset > 0 ? ` OFFSET ${offset}` : ''}`;
  if (orders.length === 0) return { sparql: `SELECT DISTINCT ?s WHERE { ${where} } ORDER BY ?s ${page}`, offset, size };
  const keys: string[] = [];
  const optionals: string[] = [];
  const sorts: string[] = [];
  orders.forEach((order, i) => {
    const descending = order.direction === 'DESC';
    if (order.field === 'id') {
      sorts.push(descending ? 'DESC(?s)' : '?s');
      return;
    }
    const field = type.fields.find((f) => f.name === order.field);
    if (!field) throw new ValidationError(`orderBy: type "${type.name}" has no field "${order.field}".`);
    optionals.push(`OPTIONAL { ?s ${iri(field.path, 'path')} ?o${i} }`);
    // A field with several values sorts by its least (ascending) or greatest (descending) one.
    keys.push(`(${descending ? 'MAX' : 'MIN'}(?o${i}) AS ?k${i})`);
    sorts.push(descending ? `DESC(?k${i})` : `?k${i}`);
  });
  if (!sorts.includes('?s') && !sorts.includes('DESC(?s)')) sorts.push('?s');
  return { sparql: `SELECT ?s ${keys.join(' ')} WHERE { ${where} ${optionals.join(' ')} } GROUP BY ?s ORDER BY ${sorts.join(' ')} ${page}`, offset, size };
}
