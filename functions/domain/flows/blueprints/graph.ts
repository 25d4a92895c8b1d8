/**
 * The task graph of a flow: connections as edges. Used by validation (cycles) and by the
 * compiler (order, ancestry). Everything is deterministic: ties are broken by task id.
 */

export interface TaskGraph {
  ids: string[];
  preds: Map<string, string[]>;
  succs: Map<string, string[]>;
}

/** Builds the graph over `ids`, keeping only edges whose ends are both known; duplicates merge. */
export function buildGraph(ids: readonly string[], edges: readonly { from: string; to: string }[]): TaskGraph {
  const known = new Set(ids);
  const preds = new Map<string, string[]>(ids.map((id) => [id, []]));
  const succs = new Map<string, string[]>(ids.map((id) => [id, []]));
  for (const { from, to } of edges) {
    if (!known.has(from) || !known.has(to)) continue;
    if (succs.get(from)!.includes(to)) continue;
    succs.get(from)!.push(to);
    preds.get(to)!.push(from);
  }
  for (const list of [...preds.values(), ...succs.values()]) list.sort(compareIds);
  return { ids: [...ids].sort(compareIds), preds, succs };
}

export function compareIds(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Topological order of `subset` (default: all), ties by id. Tasks on a cycle are left out, so
 * the result is shorter than the subset exactly when the subset holds a cycle.
 */
export function topologicalOrder(graph: TaskGraph, subset?: ReadonlySet<string>): string[] {
  const inside = subset ?? new Set(graph.ids);
  const remaining = new Map<string, number>();
  for (const id of inside) remaining.set(id, graph.preds.get(id)!.filter((p) => inside.has(p)).length);
  const ready = [...inside].filter((id) => remaining.get(id) === 0).sort(compareIds);
  const order: string[] = [];
  while (ready.length > 0) {
    const id = ready.shift()!;
    order.push(id);
    for (const next of graph.succs.get(id)!) {
      if (!inside.has(next)) continue;
      const left = remaining.get(next)! - 1;
      remaining.set(next, left);
      if (left === 0) insertSorted(ready, next);
    }
  }
  return order;
}

function insertSorted(list: string[], id: string): void {
  let i = 0;
  while (i < list.length && compareIds(list[i]!, id) < 0) i++;
  list.splice(i, 0, id);
}

/**
 * One cycle per group of tasks that reach each other (strongly connected component with more
 * than one task, or a task connected to itself), each as a path `[a, b, …, a]`, sorted.
 */
export function findCycles(graph: TaskGraph): string[][] {
  const cycles: string[][] = [];
  for (const component of stronglyConnectedComponents(graph)) {
    const first = component[0]!;
    if (component.length === 1 && !graph.succs.get(first)!.includes(first)) continue;
    cycles.push(cycleThrough(graph, new Set(component), first));
  }
  return cycles.sort((a, b) => compareIds(a[0]!, b[0]!));
}

/** A shortest cycle through `start` inside `component` (breadth-first back to start). */
function cycleThrough(graph: TaskGraph, component: ReadonlySet<string>, start: string): string[] {
  const parent = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const id = queue.shift()!;
    for (const next of graph.succs.get(id)!) {
      if (!component.has(next)) continue;
      if (next === start) {
        const path = [id];
        while (path[0] !== start) path.unshift(parent.get(path[0]!)!);
        return [...path, start];
      }
      if (!parent.has(next)) {
        parent.set(next, id);
        queue.push(next);
      }
    }
  }
  return [start, start];
}

/** Tarjan's algorithm, iterative; each component sorted by id, components in discovery order. */
function stronglyConnectedComponents(graph: TaskGraph): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const components: string[][] = [];
  let counter = 0;
  for (const root of graph.ids) {
    if (index.has(root)) continue;
    const work: { id: string; next: number }[] = [{ id: root, next: 0 }];
    index.set(root, counter);
    low.set(root, counter++);
    stack.push(root);
    onStack.add(root);
    while (work.length > 0) {
      const frame = work[work.length - 1]!;
      const succs = graph.succs.get(frame.id)!;
      if (frame.next < succs.length) {
        const next = succs[frame.next++]!;
        if (!index.has(next)) {
          index.set(next, counter);
          low.set(next, counter++);
          stack.push(next);
          onStack.add(next);
          work.push({ id: next, next: 0 });
        } else if (onStack.has(next)) {
          low.set(frame.id, Math.min(low.get(frame.id)!, index.get(next)!));
        }
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low.set(parent.id, Math.min(low.get(parent.id)!, low.get(frame.id)!));
      if (low.get(frame.id) === index.get(frame.id)) {
        const component: string[] = [];
        let member: string;
        do {
          member = stack.pop()!;
          onStack.delete(member);
          component.push(member);
        } while (member !== frame.id);
        components.push(component.sort(compareIds));
      }
    }
  }
  return components;
}

/** Every task reachable from each task (not including itself), for an acyclic graph. */
export function descendants(graph: TaskGraph): Map<string, Set<string>> {
  const result = new Map<string, Set<string>>();
  for (const id of topologicalOrder(graph).reverse()) {
    const set = new Set<string>();
    for (const next of graph.succs.get(id)!) {
      set.add(next);
      for (const d of result.get(next)!) set.add(d);
    }
    result.set(id, set);
  }
  return result;
}

/** Groups of `subset` connected by edges in either direction, each in topological order. */
export function weakComponents(graph: TaskGraph, subset: ReadonlySet<string>): string[][] {
  const seen = new Set<string>();
  const groups: Set<string>[] = [];
  for (const id of [...subset].sort(compareIds)) {
    if (seen.has(id)) continue;
    const group = new Set<string>();
    const stack = [id];
    seen.add(id);
    while (stack.length > 0) {
      const current = stack.pop()!;
      group.add(current);
      for (const n of [...graph.preds.get(current)!, ...graph.succs.get(current)!]) {
        if (subset.has(n) && !seen.has(n)) {
          seen.add(n);
          stack.push(n);
        }
      }
    }
    groups.push(group);
  }
  return groups.map((g) => topologicalOrder(graph, g));
}
