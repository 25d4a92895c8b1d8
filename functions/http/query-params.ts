import { ValidationError } from '../domain/shared/errors.js';
import type { Operations } from './api.js';
import type { HttpRequest } from './types.js';

/**
 * Refuses query parameters a route does not know (a filter silently ignored hands back the wrong
 * list): 400 naming the first unknown one and the ones the route takes.
 */
export function allowQueryParams(req: HttpRequest, allowed: readonly string[]): void {
  for (const name of new Set(req.query.keys())) {
    if (!allowed.includes(name)) {
      const known = allowed.length ? `this route takes ${allowed.join(', ')}` : 'this route takes none';
      throw new ValidationError(`${name.slice(0, 64)}: unknown query parameter; ${known}.`);
    }
  }
}

/** A flag parameter such as `verbose`: present (any value but "false") means on. */
export const flagParam = (req: HttpRequest, name: string): boolean => req.query.has(name) && req.query.get(name) !== 'false';

/** The operations named take no query parameters at all: any one answers 400 (see allowQueryParams). */
export function withoutQueryParams(ops: Operations, names: readonly string[]): Operations {
  const out = { ...ops };
  for (const name of names) {
    const op = ops[name];
    if (!op) throw new Error(`withoutQueryParams: no operation ${name}`);
    out[name] = (ctx) => {
      allowQueryParams(ctx.req, []);
      return op(ctx);
    };
  }
  return out;
}

/**
 * Every operation of a route module refuses query parameters it does not know: `allowed` names
 * the ones an operation takes (none when it is not named); the `open` ones take any by design
 * (SPARQL protocol, GraphQL, a flow's start values) and are left as they are.
 */
export function checkQueryParams(ops: Operations, allowed: Readonly<Record<string, readonly string[]>> = {}, open: readonly string[] = []): Operations {
  for (const name of [...Object.keys(allowed), ...open]) if (!ops[name]) throw new Error(`checkQueryParams: no operation ${name}`);
  const out: Operations = {};
  for (const [name, op] of Object.entries(ops)) {
    const params = allowed[name] ?? [];
    out[name] = open.includes(name)
      ? op
      : (ctx) => {
          allowQueryParams(ctx.req, params);
          return op(ctx);
        };
  }
  return out;
}
