/**
 * The e2e tests' HTTP client, shared by both test platforms (test/support/platform.ts's embedded
 * TestPlatform and test/support/aws-harness/client.ts's AwsTestPlatform): requests and the
 * accounts, tokens and datasets scenarios set up, against a base URL with an administrator token.
 */
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

export abstract class PlatformClient {
  /** The API's base URL. */
  abstract get url(): string;
  /** A token of the first administrator. */
  abstract readonly adminToken: string;

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
