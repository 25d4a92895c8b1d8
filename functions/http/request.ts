import type { z } from 'zod';
import { TooLargeError, UnsupportedMediaTypeError, ValidationError } from '../domain/shared/errors.js';
import type { HttpRequest } from './types.js';

/** JSON bodies on the API routes are small; anything bigger is a mistake or an attack. */
export const MAX_JSON_BODY_BYTES = 1024 * 1024;

export function parseCookies(header: string | undefined): Record<string, string> {
  const cookies: Record<string, string> = {};
  if (!header) return cookies;
  for (const part of header.split(';')) {
    const i = part.indexOf('=');
    if (i <= 0) continue;
    const name = part.slice(0, i).trim();
    const raw = part.slice(i + 1).trim();
    try {
      cookies[name] = decodeURIComponent(raw);
    } catch {
      cookies[name] = raw;
    }
  }
  return cookies;
}

/** Parses the JSON body against `schema`; an empty body counts as `{}`. */
export function parseJsonBody<S extends z.ZodType>(req: HttpRequest, schema: S): z.infer<S> {
  let value: unknown = {};
  if (req.body.length > MAX_JSON_BODY_BYTES) throw new TooLargeError(`The JSON body is larger than ${MAX_JSON_BODY_BYTES} bytes.`);
  if (req.body.length > 0) {
    const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
    if (type !== 'application/json' && !type?.endsWith('+json')) {
      throw new UnsupportedMediaTypeError(`Send the body as JSON with "Content-Type: application/json" (got "${type || 'none'}").`);
    }
    try {
      value = JSON.parse(req.body.toString('utf8'));
    } catch (e) {
      throw new ValidationError(`The body is not valid JSON: ${(e as Error).message}`);
    }
  }
  return validate(schema, value);
}

/** Validates a value against `schema`; failures become a 400 naming each field and what to fix. */
export function validate<S extends z.ZodType>(schema: S, value: unknown): z.infer<S> {
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const details = parsed.error.issues
      .slice(0, 5)
      .map((issue) => `${issue.path.length ? issue.path.join('.') : 'body'}: ${issue.message}`)
      .join('; ');
    throw new ValidationError(details);
  }
  return parsed.data;
}

/** One query parameter, at most once. */
export function singleQueryParam(req: HttpRequest, name: string): string | null {
  const values = req.query.getAll(name);
  if (values.length > 1) throw new ValidationError(`${name}: give this query parameter at most once.`);
  return values[0] ?? null;
}

/** `Link: <absolute>; rel="next"` for a listing, keeping the other query parameters. */
export function nextLink(req: HttpRequest, apiUrl: string, cursor: string | undefined): Record<string, string> {
  if (!cursor) return {};
  const query = new URLSearchParams(req.query);
  query.set('after', cursor);
  return { link: `<${apiUrl}${req.path}?${query.toString()}>; rel="next"` };
}
