/**
 * HTTP request: sends a request (method, headers, body with `?name` substituted); the response's
 * status and bounded body can go into output variables for the tasks after it.
 */
import { substituted, TaskFailure } from './task-context.js';
import { httpUrl } from './settings-reader.js';
import type { TaskTypeDefinition } from './task-type.js';

export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD'] as const;
/** Settings of the HTTP request task that name output variables for the response. */
export const HTTP_OUTPUT_SETTINGS = ['statusVariable', 'bodyVariable'] as const;

/** An HTTP request task waits at most this long unless its Timeout is shorter. */
const HTTP_DEFAULT_TIMEOUT_SECONDS = 300;
/** The response body kept in the task's output (it travels in the run document). */
const HTTP_MAX_BODY_CHARS = 10_000;

export const httpRequest: TaskTypeDefinition = {
  type: 'httpRequest',
  title: 'HTTP request',
  kind: 'data',
  check(s, ctx) {
    s.choice('method', HTTP_METHODS);
    httpUrl(s, 'url', ctx);
    s.textMap('headers', { what: 'a header value' });
    s.text('body', { what: 'the request body' });
    // The response's status and (bounded) body can go into output variables for later tasks.
    for (const key of HTTP_OUTPUT_SETTINGS) {
      const name = s.text(key, { what: 'the name of an output variable', references: false });
      if (name === undefined || ctx.isOutputVariable(name)) continue;
      ctx.problem(s.at(key), 'unknown-output-variable', `"${name}" is not an output variable of this flow; add it to "outputVariables" first.`);
    }
    s.finish();
  },
  async run(ctx, services) {
    const method = String(ctx.settings.method ?? 'GET');
    const url = substituted(ctx, ctx.settings.url);
    if (!/^https?:\/\//i.test(url)) throw new TaskFailure(`The URL "${url}" is not an http(s) URL; check the variables it uses.`);
    const headers = Object.fromEntries(Object.entries((ctx.settings.headers ?? {}) as Record<string, string>).map(([k, v]) => [k, substituted(ctx, v)]));
    const body = ctx.settings.body === undefined || method === 'GET' || method === 'HEAD' ? undefined : substituted(ctx, ctx.settings.body);
    const timeoutMs = Math.min((ctx.timeoutSeconds ?? HTTP_DEFAULT_TIMEOUT_SECONDS) * 1000, HTTP_DEFAULT_TIMEOUT_SECONDS * 1000);
    ctx.log(`${method} ${url}`);
    let response: Response;
    try {
      response = await services.platform.fetcher.request(url, { method, headers, ...(body !== undefined ? { body } : {}), timeoutMs });
    } catch (e) {
      const cause = (e as Error & { cause?: Error }).cause?.message ?? (e as Error).message;
      throw new TaskFailure(`${method} ${url} failed: ${cause}`);
    }
    // Read past the cut by the longest secret, so a secret straddling it is masked whole.
    const responseText = ctx.secrets.cut(await boundedText(response, HTTP_MAX_BODY_CHARS + ctx.secrets.longest), HTTP_MAX_BODY_CHARS);
    ctx.log(`Answered ${response.status} ${response.statusText} (${responseText.length} characters kept).`);
    if (response.status >= 400) throw new TaskFailure(`${method} ${url} answered ${response.status} ${response.statusText}.`);
    const variables: Record<string, string> = {};
    if (typeof ctx.settings.statusVariable === 'string') variables[ctx.settings.statusVariable] = String(response.status);
    if (typeof ctx.settings.bodyVariable === 'string') variables[ctx.settings.bodyVariable] = responseText;
    return { status: response.status, body: responseText, ...(Object.keys(variables).length > 0 ? { variables } : {}) };
  },
  setsVariables: (settings) => HTTP_OUTPUT_SETTINGS.some((k) => typeof settings[k] === 'string'),
};

/** The response body as text, read no further than `maxChars`. */
async function boundedText(response: Response, maxChars: number): Promise<string> {
  if (!response.body) return '';
  const decoder = new TextDecoder();
  let out = '';
  const reader = response.body.getReader();
  try {
    while (out.length < maxChars) {
      const { done, value } = await reader.read();
      if (done) break;
      out += decoder.decode(value, { stream: true });
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
  return out.slice(0, maxChars);
}
