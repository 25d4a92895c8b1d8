import {
  GraphQLBoolean,
  GraphQLEnumType,
  type GraphQLEnumValueConfigMap,
  GraphQLError,
  type GraphQLFieldConfig,
  type GraphQLFieldConfigMap,
  GraphQLID,
  GraphQLInputObjectType,
  type GraphQLInputFieldConfigMap,
  type GraphQLInputType,
  GraphQLInt,
  GraphQLInterfaceType,
  GraphQLList,
  GraphQLNonNull,
  GraphQLObjectType,
  type GraphQLOutputType,
  GraphQLScalarType,
  GraphQLSchema,
  GraphQLString,
  Kind,
  type ValueNode,
} from 'graphql';
import type { LevelLoader } from './batch.js';
import { cursorOf, type FilterInput, type OrderInput, pageQuery } from './filters.js';
import { byPreference, type LanguageRange, parseLanguagePreference } from './language.js';
import { connectionPlan } from './plan.js';
import { scalarFilterName } from './names.js';
import type { FieldModel, SchemaModel, TypeModel } from './shapes.js';
import { iri, type ResultTerm } from './sparql-text.js';

/**
 * The description of shapes.ts → a graphql-js schema whose resolvers read through the request's
 * LevelLoader (batched per level). Every type implements `Node` (Relay object identification);
 * the root has `node(id:)` and `<Type>Connection(first, after, filter, orderBy)` per type.
 */

export interface ExecutionContext {
  loader: LevelLoader;
  /** Parsed `language` arguments of this request, by text. */
  languages: Map<string, LanguageRange[]>;
}

interface NodeValue {
  __typename: string;
  id: string;
}

const nonNull = <T extends GraphQLOutputType | GraphQLInputType>(t: T) => new GraphQLNonNull(t);

function literalValue(ast: ValueNode): string {
  if (ast.kind === Kind.STRING || ast.kind === Kind.INT || ast.kind === Kind.FLOAT) return ast.value;
  if (ast.kind === Kind.BOOLEAN) return String(ast.value);
  throw new GraphQLError('A literal value is a string, number or boolean.', { nodes: ast });
}

function inputValue(value: unknown): string {
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return String(value);
  throw new GraphQLError('A literal value is a string, number or boolean.');
}

/** A scalar of a datatype: values are the literals' lexical forms. */
const scalarOf = (name: string, datatype: string) =>
  new GraphQLScalarType({
    name,
    description: `Literals of datatype <${datatype}>, as their lexical form.`,
    serialize: (v) => v,
    parseValue: inputValue,
    parseLiteral: literalValue,
  });

/** A `language` argument's ranges, parsed once per request. */
function rangesOf(language: string, ctx: ExecutionContext): LanguageRange[] {
  let ranges = ctx.languages.get(language);
  if (!ranges) ctx.languages.set(language, (ranges = parseLanguagePreference(language)));
  return ranges;
}

const isLiteral = (t: ResultTerm) => t.type === 'literal' || t.type === 'typed-literal';

export function buildSchema(model: SchemaModel): GraphQLSchema {
  const node = new GraphQLInterfaceType({
    name: 'Node',
    description: 'A resource of the dataset; `id` is its IRI.',
    fields: { id: { type: nonNull(GraphQLID) } },
    resolveType: (value: NodeValue) => value.__typename,
  });
  const pageInfo = new GraphQLObjectType({
    name: 'PageInfo',
    fields: {
      hasNextPage: { type: nonNull(GraphQLBoolean) },
      hasPreviousPage: { type: nonNull(GraphQLBoolean) },
      startCursor: { type: GraphQLString },
      endCursor: { type: GraphQLString },
    },
  });
  const langString = new GraphQLObjectType({
    name: 'RdfsLangString',
    description: 'A language-tagged string.',
    fields: { value: { type: nonNull(GraphQLString) }, language: { type: GraphQLString } },
  });
  const langInput = new GraphQLInputObjectType({
    name: 'RdfsLangStringInput',
    description: 'A string and, optionally, its language (without one, any language matches).',
    fields: { value: { type: nonNull(GraphQLString) }, language: { type: GraphQLString } },
  });
  const externalIri = new GraphQLObjectType({
    name: 'ExternalIri',
    description: 'An IRI of a resource the schema has no type for.',
    fields: { id: { type: nonNull(GraphQLID) } },
  });
  const externalIriFilter = new GraphQLInputObjectType({ name: 'ExternalIriFilter', fields: { id: { type: GraphQLID } } });
  const direction = new GraphQLEnumType({ name: 'OrderDirection', values: { ASC: { value: 'ASC' }, DESC: { value: 'DESC' } } });
  const operatorFilter = (name: string, of: GraphQLInputType) =>
    new GraphQLInputObjectType({
      name,
      description: '`eq`: some value equals; `in`: some value is in the list; `notEq` / `notIn`: no value does. Several operators combine with AND.',
      fields: { eq: { type: of }, in: { type: new GraphQLList(nonNull(of)) }, notEq: { type: of }, notIn: { type: new GraphQLList(nonNull(of)) } },
    });
  const langFilter = operatorFilter('RdfsLangStringFilter', langInput);
  const scalars = new Map<string, GraphQLScalarType>();
  const scalarFilters = new Map<string, GraphQLInputObjectType>();
  for (const [name, datatype] of model.scalars) {
    const scalar = scalarOf(name, datatype);
    scalars.set(name, scalar);
    scalarFilters.set(name, operatorFilter(scalarFilterName(name), scalar));
  }

  const objects = new Map<string, GraphQLObjectType>();
  const filters = new Map<string, GraphQLInputObjectType>();

  const valueType = (f: FieldModel): GraphQLOutputType => {
    switch (f.value.kind) {
      case 'scalar':
        return scalars.get(f.value.scalar)!;
      case 'langString':
        return langString;
      case 'object':
        return objects.get(f.value.type)!;
      case 'iri':
        return externalIri;
    }
  };
  const fieldFilterType = (f: FieldModel): GraphQLInputType => {
    switch (f.value.kind) {
      case 'scalar':
        return scalarFilters.get(f.value.scalar)!;
      case 'langString':
        return langFilter;
      case 'object':
        return filters.get(f.value.type)!;
      case 'iri':
        return externalIriFilter;
    }
  };

  const fieldConfig = (f: FieldModel): GraphQLFieldConfig<NodeValue, ExecutionContext, { language?: string | null }> => {
    const base = f.list ? nonNull(new GraphQLList(valueType(f))) : f.nonNull ? nonNull(valueType(f)) : valueType(f);
    const pick = <T>(values: T[]): T[] | T | null => (f.list ? values : (values[0] ?? null));
    // The loader keeps each value list sorted (byValue), so the answers' order is stable.
    const shape = (terms: ResultTerm[], language: string | null | undefined, ctx: ExecutionContext) => {
      switch (f.value.kind) {
        case 'scalar':
          return pick(terms.length === 1 && isLiteral(terms[0]!) ? [terms[0]!.value] : terms.filter(isLiteral).map((t) => t.value));
        case 'langString': {
          const values = terms.filter(isLiteral).map((t) => ({ value: t.value, language: t['xml:lang'] ?? null }));
          return pick(language ? byPreference(values, rangesOf(language, ctx)) : values);
        }
        case 'object': {
          const type = f.value.type;
          return pick(terms.filter((t) => t.type === 'uri').map((t): NodeValue => ({ __typename: type, id: t.value })));
        }
        case 'iri':
          return pick(terms.filter((t) => t.type === 'uri').map((t) => ({ id: t.value })));
      }
    };
    const config: GraphQLFieldConfig<NodeValue, ExecutionContext, { language?: string | null }> = {
      type: base,
      description: `<${f.path}>`,
      // From memory when the connection read its plan up-front (no promise per field), else batched.
      resolve: (parent, args, ctx) => {
        const known = ctx.loader.known(parent.id, f.path, args.language ? rangesOf(args.language, ctx) : undefined);
        if (known) return shape(known, args.language, ctx);
        return ctx.loader.values(parent.id, f.path).then((terms) => shape(terms, args.language, ctx));
      },
    };
    if (f.value.kind === 'langString') {
      config.args = { language: { type: GraphQLString, description: 'Languages wanted, in Accept-Language syntax: "nl, en;q=0.5" (best first).' } };
    }
    return config;
  };

  for (const t of model.types) {
    objects.set(
      t.name,
      new GraphQLObjectType<NodeValue, ExecutionContext>({
        name: t.name,
        description: `Instances of <${t.classIri}>.`,
        interfaces: [node],
        fields: () => {
          const fields: GraphQLFieldConfigMap<NodeValue, ExecutionContext> = { id: { type: nonNull(GraphQLID), description: 'The IRI.' } };
          for (const f of t.fields) fields[f.name] = fieldConfig(f) as GraphQLFieldConfig<NodeValue, ExecutionContext>;
          return fields;
        },
      }),
    );
    const filter: GraphQLInputObjectType = new GraphQLInputObjectType({
      name: `${t.name}Filter`,
      description: 'Keys combine with AND; `OR` holds when any of its filters does, `NOT` when its filter does not.',
      fields: () => {
        const fields: GraphQLInputFieldConfigMap = { id: { type: GraphQLID }, OR: { type: new GraphQLList(nonNull(filter)) }, NOT: { type: filter } };
        for (const f of t.fields) fields[f.name] = { type: fieldFilterType(f) };
        return fields;
      },
    });
    filters.set(t.name, filter);
  }

  const queryFields: GraphQLFieldConfigMap<unknown, ExecutionContext> = {
    node: {
      type: node,
      description: 'The resource with this IRI, typed by the first type (by name) whose class it has.',
      args: { id: { type: nonNull(GraphQLID) } },
      resolve: async (_root, args: { id: string }, ctx) => {
        const rows = await ctx.loader.select(`SELECT DISTINCT ?t WHERE { ${iri(args.id)} a ?t }`);
        const classes = new Set(rows.map((r) => r.t?.value));
        const type = model.types.find((t) => classes.has(t.classIri));
        return type ? { __typename: type.name, id: args.id } : null;
      },
    },
  };
  for (const t of model.types) queryFields[`${t.name}Connection`] = connectionField(model, t, objects.get(t.name)!, filters.get(t.name)!, pageInfo, direction);

  return new GraphQLSchema({ query: new GraphQLObjectType({ name: 'Query', fields: queryFields }), types: [...objects.values()] });
}

function connectionField(
  model: SchemaModel,
  t: TypeModel,
  object: GraphQLObjectType,
  filter: GraphQLInputObjectType,
  pageInfo: GraphQLObjectType,
  direction: GraphQLEnumType,
): GraphQLFieldConfig<unknown, ExecutionContext> {
  const edge = new GraphQLObjectType({ name: `${t.name}Edge`, fields: { cursor: { type: nonNull(GraphQLString) }, node: { type: nonNull(object) } } });
  const connection = new GraphQLObjectType({
    name: `${t.name}Connection`,
    fields: { edges: { type: nonNull(new GraphQLList(nonNull(edge))) }, pageInfo: { type: nonNull(pageInfo) } },
  });
  const orderValues: GraphQLEnumValueConfigMap = { id: { value: 'id' } };
  for (const f of t.fields) if (f.value.kind === 'scalar' && !['true', 'false', 'null'].includes(f.name)) orderValues[f.name] = { value: f.name };
  const orderBy = new GraphQLInputObjectType({
    name: `${t.name}OrderBy`,
    fields: { field: { type: nonNull(new GraphQLEnumType({ name: `${t.name}OrderField`, values: orderValues })) }, direction: { type: direction, defaultValue: 'ASC' } },
  });
  return {
    type: nonNull(connection),
    description: `Instances of <${t.classIri}>, a page at a time (Relay cursor connection).`,
    args: {
      first: { type: GraphQLInt, description: 'Nodes in the page: 0 to 1000, 100 when not given.' },
      after: { type: GraphQLString, description: 'The cursor of the edge the page starts after.' },
      filter: { type: filter },
      orderBy: { type: new GraphQLList(nonNull(orderBy)), description: 'Sort keys, first key first; nodes are by IRI after them.' },
    },
    resolve: async (_root, args: { first?: number | null; after?: string | null; filter?: FilterInput | null; orderBy?: OrderInput[] | null }, ctx, info) => {
      const { sparql, offset, size } = pageQuery(model, t, args);
      const ids = (await ctx.loader.select(sparql)).flatMap((r) => (r.s?.type === 'uri' ? [r.s.value] : []));
      const page = ids.slice(0, size);
      await ctx.loader.prefetch(page, connectionPlan(model, t.name, info.fieldNodes, info.fragments, info.variableValues));
      const edges = page.map((id, i) => ({ cursor: cursorOf(offset + i), node: { __typename: t.name, id } }));
      return {
        edges,
        pageInfo: {
          hasNextPage: ids.length > size,
          hasPreviousPage: offset > 0,
          startCursor: edges[0]?.cursor ?? null,
          endCursor: edges[edges.length - 1]?.cursor ?? null,
        },
      };
    },
  };
}
