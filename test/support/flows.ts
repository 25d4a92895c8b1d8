/** Flow helpers for the e2e tests: console sessions, flows, runs. */
import type { ApiResponse, TestPlatform } from './platform.js';

/** A signed-in console session: send these headers on every request. */
export async function consoleSession(p: TestPlatform, accountName: string, password = `${accountName}-password-123`): Promise<Record<string, string>> {
  const res = await p.request('POST', '/login', { body: { accountName, password } });
  if (res.status !== 200) throw new Error(`login ${accountName}: ${res.status} ${res.text}`);
  const cookie = res.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
  return { cookie, 'x-csrf-token': res.body.csrfToken as string };
}

export async function enableFlows(p: TestPlatform, switches: Record<string, boolean> = {}): Promise<void> {
  const res = await p.request('PATCH', '/admin/flows', { token: p.adminToken, body: { flowsEnabled: true, ...switches } });
  if (res.status !== 200) throw new Error(`enabling flows: ${res.status} ${res.text}`);
}

/** Creates a flow from a console session; throws unless 201. */
export async function createFlow(p: TestPlatform, account: string, session: Record<string, string>, definition: unknown): Promise<any> {
  const res = await p.request('POST', `/flows/blueprints/${account}`, { headers: session, body: definition });
  if (res.status !== 201) throw new Error(`flow in ${account}: ${res.status} ${res.text}`);
  return res.body;
}

const FINAL = new Set(['finished', 'failed', 'timeout', 'aborted']);

/** Polls a run until it ends (bounded in time and count). */
export async function waitForRun(p: TestPlatform, runId: string, token: string, timeoutMs = 20_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  let last: ApiResponse | undefined;
  for (let i = 0; i < 4_000 && Date.now() < deadline; i++) {
    last = await p.request('GET', `/flows/runs/${runId}`, { token });
    if (last.status !== 200) throw new Error(`run ${runId}: ${last.status} ${last.text}`);
    if (FINAL.has(last.body.status)) return last.body;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`run ${runId} did not end in ${timeoutMs} ms (last status ${last?.body?.status})`);
}

/** A linear flow of `n` Set variables tasks. */
export function linearFlow(id: string, n: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const tasks = Array.from({ length: n }, (_, i) => ({
    id: `t${i + 1}`,
    label: `Step ${i + 1}`,
    type: 'setVariables',
    settings: { values: { [`out${i + 1}`]: `value ${i + 1} of ?system_triggererAccountName` } },
  }));
  return {
    id,
    name: `Linear ${n}`,
    accessLevel: 'Private',
    tasks,
    connections: tasks.slice(1).map((t, i) => ({ from: tasks[i]!.id, to: t.id })),
    outputVariables: tasks.map((_, i) => ({ name: `out${i + 1}` })),
    ...extra,
  };
}

export async function startRun(p: TestPlatform, path: string, token: string, options: { query?: Record<string, string>; body?: unknown } = {}): Promise<ApiResponse> {
  const qs = options.query ? `?${new URLSearchParams(options.query).toString()}` : '';
  return p.request('POST', `${path}${qs}`, { token, ...(options.body !== undefined ? { body: options.body } : {}) });
}
