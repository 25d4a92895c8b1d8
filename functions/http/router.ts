import { ROUTES, type RouteSpec } from './route-table.js';

interface CompiledRoute {
  route: RouteSpec;
  pattern: RegExp;
  names: string[];
  /** Literal segments win over parameters, as on API Gateway. */
  specificity: number;
}

const compile = (route: RouteSpec): CompiledRoute => {
  const names: string[] = [];
  const segments = route.path.split('/').slice(1);
  const source = segments
    .map((s) => {
      const m = /^\{(\w+)\}$/.exec(s);
      if (!m) return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      names.push(m[1]!);
      return '([^/]+)';
    })
    .join('/');
  return {
    route,
    pattern: new RegExp(`^/${source}$`),
    names,
    specificity: segments.filter((s) => !s.startsWith('{')).length,
  };
};

const COMPILED = ROUTES.map(compile).sort((a, b) => b.specificity - a.specificity);

/**
 * The routes a path can match, by its number of segments and its first segment (a `{name}`
 * matches one non-empty segment, so no other route can): a request tries a handful of patterns,
 * not the whole table. Each list keeps COMPILED's order.
 */
const BUCKETS = new Map<string, CompiledRoute[]>();
for (const c of COMPILED) {
  const segments = c.route.path.split('/').slice(1);
  const first = /^\{\w+\}$/.test(segments[0] ?? '') ? '*' : segments[0];
  const key = `${segments.length}/${first}`;
  BUCKETS.set(key, [...(BUCKETS.get(key) ?? []), c]);
}

function candidates(path: string): CompiledRoute[] {
  const segments = path.split('/').length - 1;
  const end = path.indexOf('/', 1);
  const first = end < 0 ? path.slice(1) : path.slice(1, end);
  const exact = BUCKETS.get(`${segments}/${first}`) ?? [];
  const any = BUCKETS.get(`${segments}/*`) ?? [];
  if (!any.length) return exact;
  if (!exact.length) return any;
  const merged = [...exact, ...any];
  return merged.sort((a, b) => COMPILED.indexOf(a) - COMPILED.indexOf(b));
}

export type RouteMatch =
  | { kind: 'match'; route: RouteSpec; params: Record<string, string> }
  | { kind: 'method-not-allowed'; allowed: string[] }
  | { kind: 'not-found' };

/** Matches a request against the route table the way API Gateway does (used by the embedded server). */
export function matchRoute(method: string, path: string): RouteMatch {
  const allowed: string[] = [];
  const normalised = path.length > 1 ? path.replace(/\/+$/, '') : path;
  let best: { route: RouteSpec; params: Record<string, string>; specificity: number } | undefined;
  for (const c of candidates(normalised)) {
    const m = c.pattern.exec(normalised);
    if (!m) continue;
    if (c.route.method !== method && !(method === 'HEAD' && c.route.method === 'GET')) {
      allowed.push(c.route.method);
      continue;
    }
    if (!best || c.specificity > best.specificity) {
      best = { route: c.route, params: Object.fromEntries(c.names.map((n, i) => [n, m[i + 1]!])), specificity: c.specificity };
    }
  }
  if (best) return { kind: 'match', route: best.route, params: best.params };
  if (allowed.length) return { kind: 'method-not-allowed', allowed: [...new Set(allowed)] };
  return { kind: 'not-found' };
}
