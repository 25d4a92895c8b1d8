import type { TestPlatform } from './platform.js';

/** Imports files through the simple multipart route and waits (bounded) for the job to end. */
export async function importFiles(
  p: TestPlatform,
  token: string,
  dataset: string,
  files: { name: string; content: string | Buffer; type?: string }[],
  fields: Record<string, string> = {},
): Promise<any> {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  for (const f of files) form.append('file', new Blob([f.content as BlobPart], { type: f.type ?? 'application/octet-stream' }), f.name);
  const res = await fetch(`${p.url}/datasets/${dataset}/jobs`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: form });
  const job = await res.json();
  if (res.status !== 201) return { status: res.status, ...job };
  return waitForJob(p, token, dataset, job.jobId);
}

export async function waitForJob(p: TestPlatform, token: string, dataset: string, jobId: string): Promise<any> {
  for (let i = 0; i < 600; i++) {
    const res = await p.request('GET', `/datasets/${dataset}/jobs/${jobId}`, { token });
    if (['finished', 'error', 'canceled'].includes(res.body.status)) return res.body;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`job ${jobId} did not end within 30 s`);
}

export async function graphsOf(p: TestPlatform, token: string | undefined, dataset: string): Promise<any[]> {
  const res = await p.request('GET', `/datasets/${dataset}/graphs?limit=100`, { token });
  if (res.status !== 200) throw new Error(`graphs of ${dataset}: ${res.status} ${res.text}`);
  return res.body;
}

/** Sorted N-Triples/N-Quads lines without blank-node labels, for comparisons where labels do not matter. */
export const lines = (text: string) =>
  text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .sort();
