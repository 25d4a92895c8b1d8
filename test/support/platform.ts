import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmbeddedPlatform, type EmbeddedOptions, type EmbeddedPlatform } from '../../functions/composition/local.js';

export interface ApiResponse {
  status: number;
  headers: Headers;
  /** Parsed JSON when the response is JSON, else the text. */
  body: any;
  text: string;
}

export interface RequestOptions {
  token?: string;
  body?: unknown;
  rawBody?: string | Buffer;
  headers?: Record<string, string>;
}

/** A real embedded platform on 127.0.0.1 and a free port, with its own data folder. */
export class TestPlatform {
  private constructor(
    readonly platform: EmbeddedPlatform,
    readonly dataDir: string,
    readonly adminToken: string,
    private readonly ownsDir: boolean,
  ) {}

  static readonly ADMIN_PASSWORD = 'admin-password-for-tests';

  static async start(options: Partial<EmbeddedOptions> = {}): Promise<TestPlatform> {
    const ownsDir = !options.dataDir;
    const dataDir = options.dataDir ?? (await mkdtemp(join(tmpdir(), 'ldp-test-')));
    const platform = await startEmbeddedPlatform({
      port: 0,
      host: '127.0.0.1',
      adminPassword: TestPlatform.ADMIN_PASSWORD,
      env: {},
      ...options,
      dataDir,
    });
    const adminToken = (await readFile(platform.adminTokenFile, 'utf8')).trim();
    return new TestPlatform(platform, dataDir, adminToken, ownsDir);
  }

  get url(): string {
    return this.platform.url;
  }

  async stop(options: { keepData?: boolean } = {}): Promise<void> {
    await this.platform.close();
    if (this.ownsDir && !options.keepData) await rm(this.dataDir, { recursive: true, force: true });
  }

  async request(method: string, path: string, options: RequestOptions = {}): Promise<ApiResponse> {
    const headers: Record<string, string> = { ...options.headers };
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    let body: string | Buffer | undefined = options.rawBody;
    if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers['content-type'] ??= 'application/json';
    }
    const response = await fetch(`${this.url}${path}`, { method, headers, body: body as BodyInit | undefined, redirect: 'manual' });
    const text = await response.text();
    let parsed: unknown = text;
    if ((response.headers.get('content-type') ?? '').startsWith('application/json') && text) parsed = JSON.parse(text);
    return { status: response.status, headers: response.headers, body: parsed, text };
  }

  /** Creates a user (as administrator) and returns a write token for it. */
  async createUser(accountName: string, options: { password?: string; readOnlyToken?: boolean } = {}): Promise<string> {
    const created = await this.request('POST', '/accounts', {
      token: this.adminToken,
      body: { type: 'user', accountName, password: options.password ?? `${accountName}-password-123` },
    });
    if (created.status !== 201) throw new Error(`creating ${accountName}: ${created.status} ${created.text}`);
    return this.createToken(accountName, this.adminToken, options.readOnlyToken ?? false);
  }

  async createToken(accountName: string, asToken: string, readOnly = false): Promise<string> {
    const res = await this.request('POST', `/accounts/${accountName}/tokens`, {
      token: asToken,
      body: { description: 'test', readOnly },
    });
    if (res.status !== 201) throw new Error(`token for ${accountName}: ${res.status} ${res.text}`);
    return res.body.token as string;
  }

  async createOrg(accountName: string, ownerToken: string, extra: Record<string, unknown> = {}): Promise<void> {
    const res = await this.request('POST', '/accounts', { token: ownerToken, body: { type: 'org', accountName, ...extra } });
    if (res.status !== 201) throw new Error(`org ${accountName}: ${res.status} ${res.text}`);
  }

  async addMember(org: string, user: string, role: string, ownerToken: string): Promise<void> {
    const res = await this.request('POST', `/accounts/${org}/members`, { token: ownerToken, body: { accountName: user, role } });
    if (res.status !== 201) throw new Error(`member ${user}@${org}: ${res.status} ${res.text}`);
  }

  async createDataset(account: string, name: string, accessLevel: string, token: string): Promise<any> {
    const res = await this.request('POST', `/datasets/${account}`, { token, body: { name, accessLevel } });
    if (res.status !== 201) throw new Error(`dataset ${account}/${name}: ${res.status} ${res.text}`);
    return res.body;
  }
}

/** Parses `Link: <url>; rel="next"`. */
export function nextLinkOf(res: ApiResponse): string | undefined {
  const link = res.headers.get('link');
  return link ? /<([^>]+)>;\s*rel="next"/.exec(link)?.[1] : undefined;
}
