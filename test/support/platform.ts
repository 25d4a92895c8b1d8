import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmbeddedPlatform, type EmbeddedOptions, type EmbeddedPlatform } from '../../functions/composition/local.js';
import { PlatformClient, type ApiResponse } from './platform-client.js';

export type { ApiResponse, RequestOptions } from './platform-client.js';

/** A real embedded platform on 127.0.0.1 and a free port, with its own data folder. */
export class TestPlatform extends PlatformClient {
  private constructor(
    readonly platform: EmbeddedPlatform,
    readonly dataDir: string,
    readonly adminToken: string,
    private readonly ownsDir: boolean,
  ) {
    super();
  }

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
}

/** Parses `Link: <url>; rel="next"`. */
export function nextLinkOf(res: ApiResponse): string | undefined {
  const link = res.headers.get('link');
  return link ? /<([^>]+)>;\s*rel="next"/.exec(link)?.[1] : undefined;
}
