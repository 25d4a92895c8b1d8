/**
 * Dataset isomorphism for canonical quads (blank nodes matched up to renaming), for tests and
 * the conformance runner. Sets semantics: duplicate quads are ignored. Iterative hash refinement
 * of blank nodes, then backtracking over nodes with equal signatures (fine for test-sized data).
 */
import type { NtQuad } from './nt.js';

const isBlank = (t: string | null): t is string => t !== null && t.startsWith('_:');

function key(q: NtQuad): string {
  return `${q.subject} ${q.predicate} ${q.object} ${q.graph ?? ''}`;
}

function dedupe(quads: readonly NtQuad[]): NtQuad[] {
  const seen = new Map<string, NtQuad>();
  for (const q of quads) seen.set(key(q), q);
  return [...seen.values()];
}

/** Small deterministic string hash (FNV-1a, 2×32 bit), enough to partition blank nodes. */
function hash(s: string): string {
  let h1 = 0x811c9dc5;
  let h2 = 0x01000193;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 0x01000193) >>> 0;
    h2 = Math.imul(h2 ^ c, 0x5bd1e995) >>> 0;
  }
  return h1.toString(36) + h2.toString(36);
}

function signatures(quads: NtQuad[]): Map<string, string> {
  const blanks = new Set<string>();
  for (const q of quads) for (const t of [q.subject, q.object, q.graph]) if (isBlank(t)) blanks.add(t);
  let sig = new Map<string, string>([...blanks].map((b) => [b, '']));
  for (let round = 0; round < 8; round++) {
    const parts = new Map<string, string[]>([...blanks].map((b) => [b, []]));
    for (const q of quads) {
      const terms = [q.subject, q.object, q.graph] as const;
      const show = (t: string | null): string => (t === null ? '' : isBlank(t) ? `_:${sig.get(t)}` : t);
      for (let pos = 0; pos < 3; pos++) {
        const t = terms[pos]!;
        if (!isBlank(t)) continue;
        parts.get(t)!.push(`${pos}|${show(q.subject)}|${q.predicate}|${show(q.object)}|${show(q.graph)}`);
      }
    }
    const next = new Map<string, string>();
    for (const [b, p] of parts) next.set(b, hash(p.sort().join('\n')));
    const classes = (m: Map<string, string>): number => new Set(m.values()).size;
    const stable = classes(next) === classes(sig);
    sig = next;
    if (stable && round > 0) break;
  }
  return sig;
}

/** True if `a` and `b` are the same dataset up to blank node renaming. */
export function isomorphic(a: readonly NtQuad[], b: readonly NtQuad[]): boolean {
  const qa = dedupe(a);
  const qb = dedupe(b);
  if (qa.length !== qb.length) return false;
  const hasBlank = (q: NtQuad): boolean => isBlank(q.subject) || isBlank(q.object) || isBlank(q.graph);
  const groundA = new Set(qa.filter((q) => !hasBlank(q)).map(key));
  const groundB = qb.filter((q) => !hasBlank(q)).map(key);
  if (groundA.size !== groundB.length || groundB.some((k) => !groundA.has(k))) return false;
  const ba = qa.filter(hasBlank);
  const bb = qb.filter(hasBlank);
  if (ba.length === 0) return true;
  const sa = signatures(ba);
  const sb = signatures(bb);
  const bySig = (s: Map<string, string>): Map<string, string[]> => {
    const m = new Map<string, string[]>();
    for (const [b, h] of s) m.set(h, [...(m.get(h) ?? []), b]);
    return m;
  };
  const ga = bySig(sa);
  const gb = bySig(sb);
  if (ga.size !== gb.size) return false;
  for (const [h, list] of ga) if (gb.get(h)?.length !== list.length) return false;
  const target = new Set(bb.map(key));
  const nodesA = [...sa.keys()].sort((x, y) => ga.get(sa.get(x)!)!.length - ga.get(sa.get(y)!)!.length);
  const mapping = new Map<string, string>();
  const used = new Set<string>();
  const map = (t: string | null): string | null => (isBlank(t) ? (mapping.get(t) ?? t) : t);
  const check = (): boolean => ba.every((q) => target.has(key({ subject: map(q.subject)!, predicate: q.predicate, object: map(q.object)!, graph: map(q.graph) })));
  let steps = 0;
  const search = (i: number): boolean => {
    if (++steps > 200_000) throw new Error('isomorphism search too large');
    if (i === nodesA.length) return check();
    const n = nodesA[i]!;
    for (const candidate of gb.get(sa.get(n)!)!) {
      if (used.has(candidate)) continue;
      mapping.set(n, candidate);
      used.add(candidate);
      if (search(i + 1)) return true;
      used.delete(candidate);
      mapping.delete(n);
    }
    return false;
  };
  return search(0);
}

/** Sorted canonical lines, for readable diffs in failing tests. */
export function sortedNQuads(quads: readonly NtQuad[]): string[] {
  return dedupe(quads).map((q) => `${q.subject} ${q.predicate} ${q.object}${q.graph === null ? '' : ` ${q.graph}`} .`).sort();
}
