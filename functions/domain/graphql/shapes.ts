import type { Quad, Term } from '@rdfjs/types';
import {
  BUILT_IN_TYPE_NAMES,
  GRAPHQL_NAME,
  generatedNamesOf,
  illegalName,
  nameOfIri,
  RDF,
  RDF_LANG_STRING,
  scalarFilterName,
  scalarNameOf,
  SH,
} from './names.js';

/**
 * SHACL shapes → a description of the GraphQL schema (pure): an object type per `sh:NodeShape`
 * with `sh:targetClass` (several shapes of one class make one type), a field per property shape
 * with an IRI `sh:path`. Whatever cannot become
 * a type or a field is left out and said in `errors` (the `/graphql/status` route shows them).
 */

export type FieldValue =
  | { kind: 'scalar'; scalar: string; datatype: string }
  | { kind: 'langString' }
  | { kind: 'object'; type: string }
  | { kind: 'iri' };

export interface FieldModel {
  name: string;
  /** The property (`sh:path`). */
  path: string;
  /** Many values (a list); false for `sh:maxCount 1` and for `sh:uniqueLang true`. */
  list: boolean;
  /** `sh:minCount 1` with a single value. */
  nonNull: boolean;
  value: FieldValue;
}

export interface TypeModel {
  name: string;
  classIri: string;
  fields: FieldModel[];
}

export interface SchemaModel {
  types: TypeModel[];
  /** Scalar name → datatype IRI. */
  scalars: Map<string, string>;
  /** Every shape or name that had to be skipped, and why. */
  errors: string[];
}

const TYPE = `${RDF}type`;
/** IRIs a SPARQL query can name (IRIREF): the store holds no other, but the SPARQL text never takes one. */
const SAFE_IRI = /^[A-Za-z][A-Za-z0-9+.-]*:[^\u0000-\u0020<>"{}|^`\\]*$/;
const key = (t: Term): string => (t.termType === 'BlankNode' ? `_:${t.value}` : t.value);
const show = (t: Term): string => (t.termType === 'NamedNode' ? `<${t.value}>` : t.termType === 'BlankNode' ? `_:${t.value}` : JSON.stringify(t.value));

class Index {
  private readonly bySubject = new Map<string, Map<string, Term[]>>();
  constructor(quads: Iterable<Quad>) {
    for (const q of quads) {
      const k = key(q.subject);
      let props = this.bySubject.get(k);
      if (!props) this.bySubject.set(k, (props = new Map()));
      const list = props.get(q.predicate.value) ?? [];
      if (!list.some((t) => t.termType === q.object.termType && t.value === q.object.value)) list.push(q.object);
      props.set(q.predicate.value, list);
    }
  }
  objects(subject: Term | string, predicate: string): Term[] {
    return this.bySubject.get(typeof subject === 'string' ? subject : key(subject))?.get(predicate) ?? [];
  }
  subjects(): string[] {
    return [...this.bySubject.keys()];
  }
  one(subject: Term | string, predicate: string): Term | undefined {
    return this.objects(subject, predicate)[0];
  }
}

const int = (t: Term | undefined): number | undefined => (t?.termType === 'Literal' && /^[+]?\d+$/.test(t.value) ? Number(t.value) : undefined);

interface TypeCandidate {
  /** Every node shape targeting the class: one type, their property shapes together. */
  shapes: string[];
  classIri: string;
  name: string;
}

/** The override by the renaming predicate, or the IRI's own name. */
function nameOf(index: Index, node: Term | string, fallback: string, errors: string[], what: string): string {
  const names = index.objects(node, GRAPHQL_NAME).filter((t) => t.termType === 'Literal').map((t) => t.value).sort();
  if (names.length > 1) errors.push(`${what} has several graphqlName values (${names.map((n) => JSON.stringify(n)).join(', ')}); "${names[0]}" is used.`);
  return names[0] ?? fallback;
}

/** Keeps the candidates whose name no other candidate has; the others are reported. */
function withoutCollisions<T extends { name: string }>(items: T[], describe: (item: T) => string, errors: string[]): T[] {
  const byName = new Map<string, T[]>();
  for (const item of items) byName.set(item.name, [...(byName.get(item.name) ?? []), item]);
  const kept: T[] = [];
  for (const [name, group] of byName) {
    if (group.length === 1) kept.push(group[0]!);
    else errors.push(`"${name}" is the name of ${group.map(describe).sort().join(' and ')}; none of them is in the schema (rename one with graphqlName).`);
  }
  return kept;
}

export function schemaModelOf(quads: Iterable<Quad>): SchemaModel {
  const index = new Index(quads);
  const errors: string[] = [];
  const shapeKeys = index
    .subjects()
    .filter((s) => index.objects(s, TYPE).some((t) => t.value === `${SH}NodeShape`) || index.objects(s, `${SH}targetClass`).length > 0)
    .sort();

  // Types: one per target class, over every shape that targets it.
  const byClass = new Map<string, TypeCandidate>();
  for (const shape of shapeKeys) {
    const classes = index.objects(shape, `${SH}targetClass`).filter((t) => t.termType === 'NamedNode' && SAFE_IRI.test(t.value));
    if (classes.length === 0) continue; // A shape used only through sh:node or sh:and makes no type.
    for (const cls of classes) {
      const name = nameOf(index, cls, nameOfIri(cls.value), errors, `Class <${cls.value}>`);
      const illegal = illegalName(name);
      if (illegal) errors.push(`Class <${cls.value}> (shape ${shape.startsWith('_:') ? 'a blank node' : `<${shape}>`}): ${illegal}; the type is skipped.`);
      else {
        const known = byClass.get(cls.value);
        if (known) known.shapes.push(shape);
        else byClass.set(cls.value, { shapes: [shape], classIri: cls.value, name });
      }
    }
  }
  const candidates = [...byClass.values()];
  const describeType = (c: TypeCandidate) => `the type of class <${c.classIri}>`;
  let types = withoutCollisions(candidates, describeType, errors);
  types = types.filter((t) => {
    if (BUILT_IN_TYPE_NAMES.has(t.name)) errors.push(`The type of class <${t.classIri}> would be named "${t.name}", a name the schema uses itself; it is skipped (rename it with graphqlName).`);
    return !BUILT_IN_TYPE_NAMES.has(t.name);
  });
  // A type named like another's generated names (BookConnection beside Book) collides with them.
  const generated = new Map<string, string>();
  for (const t of types) for (const g of generatedNamesOf(t.name)) generated.set(g, t.name);
  types = types.filter((t) => {
    const owner = generated.get(t.name);
    if (owner) errors.push(`The type of class <${t.classIri}> would be named "${t.name}", which the schema generates for type "${owner}"; it is skipped.`);
    return !owner;
  });

  // Scalars: one per datatype in use; two datatypes with one name collide.
  const datatypes = new Set<string>();
  for (const t of types) {
    for (const ps of t.shapes.flatMap((shape) => index.objects(shape, `${SH}property`))) {
      const dt = index.one(ps, `${SH}datatype`);
      if (dt?.termType === 'NamedNode' && dt.value !== RDF_LANG_STRING) datatypes.add(dt.value);
    }
  }
  const scalars = new Map<string, string>();
  const badDatatypes = new Map<string, string>();
  for (const dt of [...datatypes].sort()) {
    const name = scalarNameOf(dt);
    const illegal = illegalName(name);
    const taken = scalars.get(name);
    if (illegal) badDatatypes.set(dt, `${illegal} (the scalar of datatype <${dt}>)`);
    else if (taken) badDatatypes.set(dt, `datatype <${dt}> and datatype <${taken}> both make scalar "${name}"`);
    else if (BUILT_IN_TYPE_NAMES.has(name) || BUILT_IN_TYPE_NAMES.has(scalarFilterName(name)) || generated.has(name) || generated.has(scalarFilterName(name))) {
      badDatatypes.set(dt, `the scalar of datatype <${dt}> would be named "${name}", a name the schema uses itself`);
    }
    else scalars.set(name, dt);
  }
  // A type named like a scalar (or its filter) collides with it: the scalar stays.
  const scalarNames = new Set([...scalars.keys()].flatMap((s) => [s, scalarFilterName(s)]));
  types = types.filter((t) => {
    if (scalarNames.has(t.name)) errors.push(`The type of class <${t.classIri}> would be named "${t.name}", the name of a scalar; it is skipped (rename it with graphqlName).`);
    return !scalarNames.has(t.name);
  });

  const typeOfClass = new Map(types.map((t) => [t.classIri, t.name]));
  const typeOfShape = new Map(types.flatMap((t) => t.shapes.map((shape) => [shape, t.name] as const)));

  const models: TypeModel[] = types.map((t) => {
    const fields: FieldModel[] = [];
    // In the order of their paths (blank-node labels differ from one read to the next).
    const pathOf = (ps: Term) => index.one(ps, `${SH}path`)?.value ?? '';
    const propertyShapes = t.shapes.flatMap((shape) => index.objects(shape, `${SH}property`)).sort((a, b) => pathOf(a).localeCompare(pathOf(b)) || key(a).localeCompare(key(b)));
    for (const ps of propertyShapes) {
      const path = index.one(ps, `${SH}path`);
      const where = `Type "${t.name}", property shape ${path?.termType === 'NamedNode' ? `of <${path.value}>` : show(ps)}`;
      if (path?.termType !== 'NamedNode') {
        errors.push(`${where}: sh:path is not a single IRI (sequence, inverse and alternative paths are not supported); the field is skipped.`);
        continue;
      }
      if (!SAFE_IRI.test(path.value)) {
        errors.push(`${where}: the path is not an IRI a SPARQL query can name; the field is skipped.`);
        continue;
      }
      const name = nameOf(index, ps, nameOfIri(path.value), errors, where);
      const illegal = illegalName(name);
      if (illegal) {
        errors.push(`${where}: ${illegal}; the field is skipped.`);
        continue;
      }
      const maxCount = int(index.one(ps, `${SH}maxCount`));
      const minCount = int(index.one(ps, `${SH}minCount`));
      const datatype = index.one(ps, `${SH}datatype`);
      const cls = index.one(ps, `${SH}class`);
      const node = index.one(ps, `${SH}node`);
      let value: FieldValue;
      let single = maxCount === 1;
      if (datatype?.termType === 'NamedNode') {
        if (datatype.value === RDF_LANG_STRING) {
          value = { kind: 'langString' };
          if (index.one(ps, `${SH}uniqueLang`)?.value === 'true') single = true;
        } else {
          const bad = badDatatypes.get(datatype.value);
          if (bad) {
            errors.push(`${where}: ${bad}; the field is skipped.`);
            continue;
          }
          value = { kind: 'scalar', scalar: scalarNameOf(datatype.value), datatype: datatype.value };
        }
      } else if (cls?.termType === 'NamedNode') {
        const target = typeOfClass.get(cls.value);
        value = target ? { kind: 'object', type: target } : { kind: 'iri' };
      } else if (node && typeOfShape.has(key(node))) {
        value = { kind: 'object', type: typeOfShape.get(key(node))! };
      } else if (index.one(ps, `${SH}nodeKind`)?.value === `${SH}IRI`) {
        value = { kind: 'iri' };
      } else {
        errors.push(`${where}: it has no sh:datatype, sh:class, sh:node of a typed shape or sh:nodeKind sh:IRI, so its GraphQL type is unknown; the field is skipped.`);
        continue;
      }
      fields.push({ name, path: path.value, list: !single, nonNull: single && (minCount ?? 0) >= 1, value });
    }
    const reserved = fields.filter((f) => f.name === 'id');
    for (const f of reserved) errors.push(`Type "${t.name}", field of <${f.path}>: "id" is the IRI of every type; the field is skipped (rename it with graphqlName).`);
    const kept = withoutCollisions(
      fields.filter((f) => f.name !== 'id'),
      (f) => `the field of <${f.path}> in type "${t.name}"`,
      errors,
    );
    return { name: t.name, classIri: t.classIri, fields: kept };
  });
  return { types: models.sort((a, b) => a.name.localeCompare(b.name)), scalars, errors };
}
