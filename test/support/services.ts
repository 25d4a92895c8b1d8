import type { TestPlatform } from './platform.js';

/** Creates a service and waits (bounded) until it is running. */
export async function startService(p: TestPlatform, token: string, dataset: string, body: Record<string, unknown>): Promise<any> {
  const created = await p.request('POST', `/datasets/${dataset}/services`, { token, body });
  if (created.status !== 201) throw new Error(`service: ${created.status} ${created.text}`);
  return waitForService(p, token, dataset, created.body.name);
}

export async function waitForService(p: TestPlatform, token: string | undefined, dataset: string, name: string, until = 'running'): Promise<any> {
  for (let i = 0; i < 600; i++) {
    const res = await p.request('GET', `/datasets/${dataset}/services/${name}`, { token });
    if (res.body.status === until || res.body.status === 'error') return res.body;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`service ${name} did not become ${until} within 30 s`);
}

/** Runs a SELECT through the protocol and returns the bindings as plain values. */
export async function select(p: TestPlatform, token: string | undefined, endpoint: string, query: string): Promise<Record<string, string>[]> {
  const res = await p.request('GET', `${endpoint}?query=${encodeURIComponent(query)}`, { token, headers: { accept: 'application/sparql-results+json' } });
  if (res.status !== 200) throw new Error(`query: ${res.status} ${res.text}`);
  const json = JSON.parse(res.text);
  return json.results.bindings.map((b: Record<string, { value: string }>) => Object.fromEntries(Object.entries(b).map(([k, v]) => [k, v.value])));
}
