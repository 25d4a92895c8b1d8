import { type FieldNode, type FragmentDefinitionNode, Kind, type SelectionSetNode } from 'graphql';
import { parseLanguagePreference } from './language.js';
import type { SchemaModel } from './shapes.js';

/**
 * What a connection's selection will read, level by level, known before its resolvers run: the
 * properties of its nodes, and for each object field the plan of the nodes it leads to. The
 * connection's resolver reads the whole plan up-front (LevelLoader.prefetch: one query per level),
 * so the field resolvers below it answer from memory, synchronously (graphql-js then completes
 * the page without a promise per field). Anything the plan misses (a `node(id:)` root, a field
 * under a fragment on another type) is still read by the resolvers, batched per level.
 */
export interface LevelPlan {
  properties: Set<string>;
  /**
   * Language-string properties every use of which asks for given languages (`language` without
   * `*`): the level reads only values in those languages (the ranges of weight above 0).
   */
  languages: Map<string, Set<string>>;
  /** Object fields by property: the plan of the nodes they lead to. */
  children: Map<string, LevelPlan>;
}

/** The fields a selection set asks for, through fragments and inline fragments (directives ignored: reading more is harmless). */
function collectFields(sets: readonly SelectionSetNode[], fragments: Record<string, FragmentDefinitionNode>): FieldNode[] {
  const out: FieldNode[] = [];
  const seen = new Set<string>();
  const walk = (set: SelectionSetNode) => {
    for (const s of set.selections) {
      if (s.kind === Kind.FIELD) out.push(s);
      else if (s.kind === Kind.INLINE_FRAGMENT) walk(s.selectionSet);
      else if (!seen.has(s.name.value)) {
        seen.add(s.name.value);
        const fragment = fragments[s.name.value];
        if (fragment) walk(fragment.selectionSet);
      }
    }
  };
  for (const set of sets) walk(set);
  return out;
}

const subSets = (fields: FieldNode[], name: string): SelectionSetNode[] => fields.filter((f) => f.name.value === name && f.selectionSet).map((f) => f.selectionSet!);

/** The language ranges every one of `nodes` asks for, or null when one asks for any language. */
function languagesOf(nodes: FieldNode[], variables: Record<string, unknown>): Set<string> | null {
  const ranges = new Set<string>();
  for (const node of nodes) {
    const arg = node.arguments?.find((a) => a.name.value === 'language');
    const text = arg?.value.kind === Kind.STRING ? arg.value.value : arg?.value.kind === Kind.VARIABLE ? variables[arg.value.name.value] : undefined;
    if (typeof text !== 'string' || text === '') return null;
    for (const r of parseLanguagePreference(text)) {
      if (r.range === '*') return null;
      if (r.q > 0) ranges.add(r.range);
    }
  }
  return ranges.size > 0 ? ranges : null;
}

export function planOf(
  model: SchemaModel,
  typeName: string,
  sets: readonly SelectionSetNode[],
  fragments: Record<string, FragmentDefinitionNode>,
  variables: Record<string, unknown> = {},
  depth = 0,
): LevelPlan {
  const plan: LevelPlan = { properties: new Set(), languages: new Map(), children: new Map() };
  const type = model.types.find((t) => t.name === typeName);
  if (!type || depth > 16) return plan;
  const fields = collectFields(sets, fragments);
  for (const f of type.fields) {
    const asked = fields.filter((n) => n.name.value === f.name);
    if (asked.length === 0) continue;
    plan.properties.add(f.path);
    if (f.value.kind === 'langString') {
      const languages = languagesOf(asked, variables);
      if (languages) plan.languages.set(f.path, languages);
    }
    if (f.value.kind === 'object') {
      const child = planOf(model, f.value.type, subSets(asked, f.name), fragments, variables, depth + 1);
      if (child.properties.size > 0) plan.children.set(f.path, child);
    }
  }
  return plan;
}

/** The plan of a connection field's `edges { node { … } }`. */
export function connectionPlan(
  model: SchemaModel,
  typeName: string,
  connectionFields: readonly FieldNode[],
  fragments: Record<string, FragmentDefinitionNode>,
  variables: Record<string, unknown>,
): LevelPlan {
  const connection = collectFields(
    connectionFields.flatMap((f) => (f.selectionSet ? [f.selectionSet] : [])),
    fragments,
  );
  const edges = collectFields(subSets(connection, 'edges'), fragments);
  return planOf(model, typeName, subSets(edges, 'node'), fragments, variables);
}
