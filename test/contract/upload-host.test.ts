/**
 * The upload host as a plain Node process (`main.ts upload-host`, as its Fargate task starts it),
 * against the AWS stand-ins (dynalite, s3rver): tus uploads over HTTP for an import job and an
 * asset end in the uploads bucket (S3 multipart) and in the job / asset; refusals are those of
 * Lambda; SIGTERM drains and exits 0. The bundle and the task definition are proven in
 * test/aws/uploads.test.ts behind the harness.
 */
import { GetObjectCommand, HeadObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENV } from '../../functions/env-names.js';
import { useAwsStandIns } from '../support/aws-stand-ins.js';

const MIB = 1024 * 1024;
const b64 = (s: string) => Buffer.from(s).toString('base64');
const tus = { 'tus-resumable': '1.0.0' };

// Creating a job puts an "Import started" event on EventBridge, which has no stand-in: accepted.
useAwsStandIns({
  table: 'upload-host',
  s3DirPrefix: 'ldp-upload-host-',
  faked: ['EVENTBRIDGE'],
  fake: (_req, _body, res) => {
    res.writeHead(200, { 'content-type': 'application/x-amz-json-1.1' });
    res.end(JSON.stringify({ FailedEntryCount: 0, Entries: [{ EventId: 'e-1' }] }));
  },
});

interface Host {
  child: ChildProcess;
  url: string;
  lines: Record<string, unknown>[];
  exited: Promise<number | null>;
  stderr: string[];
}

/** Starts `main.ts upload-host` with the stand-ins' environment and waits until it listens. */
async function startHost(extraEnv: Record<string, string | undefined>): Promise<Host> {
  const env = { ...process.env, [ENV.port]: '0', [ENV.publicApiUrl]: 'https://api.example.org', [ENV.logLevel]: 'INFO', ...extraEnv } as NodeJS.ProcessEnv;
  for (const [k, v] of Object.entries(extraEnv)) if (v === undefined) delete env[k];
  const child = spawn(process.execPath, ['--import', 'tsx', 'functions/containers/main.ts', 'upload-host'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: Record<string, unknown>[] = [];
  const stderr: string[] = [];
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  createInterface({ input: child.stderr! }).on('line', (l) => stderr.push(l));
  const listening = new Promise<number | null>((resolve) => {
    createInterface({ input: child.stdout! }).on('line', (l) => {
      try {
        const line = JSON.parse(l) as Record<string, unknown>;
        lines.push(line);
        if (line.message === 'upload host listening') resolve(line.port as number);
      } catch {
        // not a log line
      }
    });
    void exited.then(() => resolve(null));
  });
  const port = await listening;
  return { child, url: port ? `http://127.0.0.1:${port}` : '', lines, exited, stderr };
}

const bytes = (size: number, seed: number): Buffer => {
  const out = Buffer.alloc(size);
  for (let i = 0; i < size; i++) out[i] = (i * 13 + seed) & 0xff;
  return out;
};

describe('upload host (container role upload-host)', () => {
  let host: Host;
  let token: string;
  let s3: S3Client;

  beforeAll(async () => {
    s3 = new S3Client({});
    const { awsServices } = await import('../../functions/composition/aws.js');
    const services = await awsServices();
    const { account } = await services.accounts.ensureAdministrator('ops', 'ops-password-123');
    token = (await services.auth.issueToken(account, { description: 'upload-host', readOnly: false }, 'https://api.example.org')).token;
    host = await startHost({ [ENV.uploadHost]: 'true' });
    expect(host.url, host.stderr.join('\n')).not.toBe('');
    const ds = await fetch(`${host.url}/datasets/ops`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'big', accessLevel: 'private' }) });
    expect(ds.status).toBe(201);
  }, 60_000);

  afterAll(async () => {
    if (host?.child.exitCode === null) host.child.kill('SIGKILL');
    s3?.destroy();
  });

  const send = (method: string, path: string, headers: Record<string, string> = {}, body?: Buffer) =>
    fetch(path.startsWith('http') ? path : `${host.url}${path}`, { method, headers: { authorization: `Bearer ${token}`, ...headers }, body: body ? new Uint8Array(body) : undefined });
  const patch = (location: string, offset: number, body: Buffer) => send('PATCH', location, { ...tus, 'upload-offset': String(offset), 'content-type': 'application/offset+octet-stream' }, body);
  /** The host's Location is under PUBLIC_API_URL; the test reaches the host itself. */
  const local = (location: string) => location.replace('https://api.example.org', host.url);

  it('takes an import job file by tus in 6 MiB PATCHes, into tus/<id> of the uploads bucket, and the job lists it', async () => {
    const job = await send('POST', '/datasets/ops/big/jobs', { 'content-type': 'application/json' }, Buffer.from('{}'));
    expect(job.status, `${await job.clone().text()} ${JSON.stringify(host.lines.slice(-3))} ${host.stderr.join('\n')}`).toBe(201);
    const { jobId } = (await job.json()) as { jobId: string };
    const data = bytes(13 * MIB, 1);
    const created = await send('POST', `/datasets/ops/big/jobs/${jobId}/add`, { ...tus, 'upload-length': String(data.length), 'upload-metadata': `filename ${b64('people.nt')}` });
    expect(created.status).toBe(201);
    const location = created.headers.get('location')!;
    expect(location).toMatch(new RegExp(`^https://api\\.example\\.org/datasets/ops/big/jobs/${jobId}/add/[0-9a-f]{32}$`));
    const id = location.split('/').pop()!;
    for (let offset = 0; offset < data.length; offset += 6 * MIB) {
      const res = await patch(local(location), offset, data.subarray(offset, offset + 6 * MIB));
      expect(res.status).toBe(204);
    }
    const stored = await s3.send(new GetObjectCommand({ Bucket: 'uploads', Key: `tus/${id}` }));
    const got = Buffer.from(await stored.Body!.transformToByteArray());
    expect(createHash('sha256').update(got).digest('hex')).toBe(createHash('sha256').update(data).digest('hex'));
    const view = (await (await send('GET', `/datasets/ops/big/jobs/${jobId}`)).json()) as { files?: { fileName?: string; name?: string; size?: number }[] };
    expect(JSON.stringify(view)).toContain('people.nt');
  }, 60_000);

  it('stores an asset uploaded by tus, answering the final PATCH with the asset', async () => {
    const data = bytes(7 * MIB, 2);
    const created = await send('POST', '/datasets/ops/big/assets/add', { ...tus, 'upload-length': String(data.length), 'upload-metadata': `filename ${b64('/home/me/report.pdf')}` });
    expect(created.status).toBe(201);
    const location = local(created.headers.get('location')!);
    expect((await patch(location, 0, data.subarray(0, 5 * MIB))).status).toBe(204);
    // HEAD from the host tells where to resume.
    expect((await send('HEAD', location, tus)).headers.get('upload-offset')).toBe(String(5 * MIB));
    const last = await patch(location, 5 * MIB, data.subarray(5 * MIB));
    expect(last.status).toBe(200);
    const asset = (await last.json()) as { assetName: string; versions: { fileSize: number }[] };
    expect(asset.assetName).toBe('report.pdf');
    expect(asset.versions[0]?.fileSize).toBe(data.length);
    // The upload was moved into the data bucket: nothing of it is left in the uploads bucket.
    await expect(s3.send(new HeadObjectCommand({ Bucket: 'uploads', Key: `tus/${location.split('/').pop()}.json` }))).rejects.toMatchObject({ name: 'NotFound' });
  }, 60_000);

  it('refuses as Lambda does: no token 404 (private dataset), another scope 404, a bad route 404 JSON', async () => {
    const noToken = await fetch(`${host.url}/datasets/ops/big/assets/add`, { method: 'POST', headers: { ...tus, 'upload-length': '10', 'upload-metadata': `filename ${b64('a.txt')}` } });
    // A private dataset is not found by a caller without access (as on Lambda and embedded).
    expect(noToken.status).toBe(404);
    const created = await send('POST', '/datasets/ops/big/assets/add', { ...tus, 'upload-length': '10', 'upload-metadata': `filename ${b64('b.txt')}` });
    const id = created.headers.get('location')!.split('/').pop()!;
    const job = (await (await send('POST', '/datasets/ops/big/jobs', { 'content-type': 'application/json' }, Buffer.from('{}'))).json()) as { jobId: string };
    expect((await send('HEAD', `/datasets/ops/big/jobs/${job.jobId}/add/${id}`, tus)).status).toBe(404);
    const none = await send('GET', '/no/such/route/here/at/all');
    expect(none.status).toBe(404);
    expect(((await none.json()) as { message: string }).message).toMatch(/No route/);
  }, 30_000);

  it('drains and exits 0 on SIGTERM, having logged each request through the Powertools logger', async () => {
    host.child.kill('SIGTERM');
    expect(await host.exited).toBe(0);
    expect(host.lines.some((l) => l.message === 'request' && typeof l.status === 'number' && typeof l.route === 'string')).toBe(true);
    expect(host.lines.at(-1)?.message).toBe('upload host stopped');
  }, 30_000);

  it('refuses to start on a task definition without UPLOAD_HOST', async () => {
    const wrong = await startHost({ [ENV.uploadHost]: undefined });
    expect(wrong.url).toBe('');
    expect(await wrong.exited).toBe(1);
    expect(wrong.stderr.join('\n')).toMatch(/UPLOAD_HOST is not ..true/);
  }, 30_000);
});
