import {
  type FragmentDefinitionNode,
  getNamedType,
  getNullableType,
  type GraphQLCompositeType,
  GraphQLList,
  type GraphQLSchema,
  isCompositeType,
  isObjectType,
  Kind,
  type OperationDefinitionNode,
  type SelectionSetNode,
  typeFromAST,
} from 'graphql';
import { DEFAULT_PAGE_SIZE } from './filters.js';

/**
 * Depth and cost of an operation, checked before anything runs. Depth: fields nested in fields
 * (introspection fields are free: the schema bounds them). Cost: the nodes and fields the query
 * may produce, estimated with `first` for connections (100 when not given) and LIST_FANOUT nodes
 * per list field of nodes; a field of values (scalars, language strings, external IRIs) costs one
 * per node it is on.
 */
export const MAX_DEPTH = 10;
export const MAX_COST = 100_000;
export const LIST_FANOUT = 5;

export interface Measure {
  depth: number;
  cost: number;
}

function firstOf(field: { arguments?: readonly { name: { value: string }; value: import('graphql').ValueNode }[] }, variables: Record<string, unknown>): number {
  const arg = field.arguments?.find((a) => a.name.value === 'first');
  if (!arg) return DEFAULT_PAGE_SIZE;
  if (arg.value.kind === Kind.INT) return Number(arg.value.value);
  if (arg.value.kind === Kind.VARIABLE) {
    const v = variables[arg.value.name.value];
    return typeof v === 'number' ? v : DEFAULT_PAGE_SIZE;
  }
  return DEFAULT_PAGE_SIZE;
}

export function measure(schema: GraphQLSchema, operation: OperationDefinitionNode, fragments: Map<string, FragmentDefinitionNode>, variables: Record<string, unknown>): Measure {
  const walk = (set: SelectionSetNode, parent: GraphQLCompositeType, multiplier: number, seen: Set<string>): Measure => {
    let depth = 0;
    let cost = 0;
    for (const selection of set.selections) {
      let inner: Measure = { depth: 0, cost: 0 };
      if (selection.kind === Kind.FIELD) {
        if (selection.name.value.startsWith('__')) continue;
        const field = 'getFields' in parent ? parent.getFields()[selection.name.value] : undefined;
        if (!field || !selection.selectionSet) {
          cost += multiplier;
          depth = Math.max(depth, 1);
          continue;
        }
        const named = getNamedType(field.type);
        // Values that are objects of their own (a language string, an external IRI, the page info) cost as one field.
        const leafLike = !named.name.endsWith('Connection') && !named.name.endsWith('Edge') && !(isObjectType(named) && named.getInterfaces().some((i) => i.name === 'Node'));
        let factor = 1;
        if (named.name.endsWith('Connection') && field.args.some((a) => a.name === 'first')) factor = Math.max(firstOf(selection, variables), 1);
        else if (!leafLike && getNullableType(field.type) instanceof GraphQLList && !named.name.endsWith('Edge')) factor = LIST_FANOUT;
        const child = isCompositeType(named) ? walk(selection.selectionSet, named, leafLike ? 0 : multiplier * factor, seen) : { depth: 0, cost: 0 };
        inner = { depth: child.depth + 1, cost: child.cost + multiplier * factor };
      } else {
        const fragment = selection.kind === Kind.FRAGMENT_SPREAD ? fragments.get(selection.name.value) : selection;
        if (!fragment || (selection.kind === Kind.FRAGMENT_SPREAD && seen.has(selection.name.value))) continue;
        const condition = fragment.typeCondition ? typeFromAST(schema, fragment.typeCondition) : parent;
        const next = selection.kind === Kind.FRAGMENT_SPREAD ? new Set([...seen, selection.name.value]) : seen;
        inner = walk(fragment.selectionSet, condition && isCompositeType(condition) ? condition : parent, multiplier, next);
      }
      depth = Math.max(depth, inner.depth);
      cost += inner.cost;
    }
    return { depth, cost };
  };
  const root = schema.getQueryType();
  return root ? walk(operation.selectionSet, root, 1, new Set()) : { depth: 0, cost: 0 };
}
