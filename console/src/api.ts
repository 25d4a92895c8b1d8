/** The console's one way to the API: same origin, the session cookie, and the CSRF header on every change. */
export interface Problem {
  code: string;
  path: string;
  message: string;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** A flow's validation problems, kept apart so the canvas can show each on its task. */
    readonly problems: Problem[] = [],
  ) {
    super(message);
  }
}

/** The CSRF token the API set at sign-in (the ldp_csrf cookie is readable by scripts on purpose). */
export function csrfToken(): string {
  const hit = document.cookie.split('; ').find((c) => c.startsWith('ldp_csrf='));
  return hit ? decodeURIComponent(hit.slice('ldp_csrf='.length)) : '';
}

export const enc = encodeURIComponent;

/** The API's own words for a failed answer: its JSON `message`, else its text. */
async function errorOf(res: Response): Promise<ApiError> {
  const text = await res.text().catch(() => '');
  let message = text.trim() || `${res.status} ${res.statusText}`;
  let problems: Problem[] = [];
  try {
    const body = JSON.parse(text) as { message?: unknown; problems?: unknown };
    if (typeof body.message === 'string') message = body.message;
    if (Array.isArray(body.problems)) problems = body.problems as Problem[];
  } catch {
    // plain text (SPARQL errors are)
  }
  return new ApiError(res.status, message, problems);
}

export interface CallOptions {
  body?: unknown;
  headers?: Record<string, string>;
  form?: URLSearchParams;
  /** A body sent as it is, with the content-type the caller gives. */
  raw?: string;
}

export async function call(method: string, path: string, options: CallOptions = {}): Promise<Response> {
  const headers: Record<string, string> = { accept: 'application/json', ...options.headers };
  let body: BodyInit | undefined;
  if (options.raw !== undefined) {
    body = options.raw;
  } else if (options.form) {
    body = options.form;
    headers['content-type'] = 'application/x-www-form-urlencoded';
  } else if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] = 'application/json';
  }
  if (method !== 'GET' && method !== 'HEAD') headers['x-csrf-token'] = csrfToken();
  const res = await fetch(path, { method, headers, body, credentials: 'same-origin' });
  if (!res.ok) throw await errorOf(res);
  return res;
}

/** A JSON answer (or undefined for 204). */
export async function api<T = any>(method: string, path: string, options: CallOptions = {}): Promise<T> {
  const res = await call(method, path, options);
  if (res.status === 204) return undefined as T;
  const text = await res.text();
  return (text ? JSON.parse(text) : undefined) as T;
}

export const errorText = (e: unknown): string => (e instanceof Error ? e.message : String(e));
