/**
 * The e2e client over the AWS harness: the same surface as test/support/platform.ts's
 * TestPlatform (the shared PlatformClient's request, createUser, createToken, createOrg, addMember,
 * createDataset; adminToken, url, stop), so scenarios run against both runtimes. The first
 * administrator is made the way the README's operator step does it: `bin/cli.ts create-admin` with
 * the deployment's table.
 */
import { PlatformClient } from '../platform-client.js';
import { AwsHarness, type HarnessOptions } from './index.js';
// The SPARQL host task's Virtuoso image runs on Debian's virtuoso-t (services start hosts).
import './virtuoso-runner.js';

export class AwsTestPlatform extends PlatformClient {
  static readonly ADMIN_PASSWORD = 'admin-password-for-tests';

  private constructor(
    readonly aws: AwsHarness,
    readonly adminToken: string,
  ) {
    super();
  }

  static async start(options: HarnessOptions = {}): Promise<AwsTestPlatform> {
    const aws = await AwsHarness.start(options);
    try {
      const adminToken = await aws.createAdmin('admin', AwsTestPlatform.ADMIN_PASSWORD);
      return new AwsTestPlatform(aws, adminToken);
    } catch (e) {
      await aws.stop();
      throw e;
    }
  }

  get url(): string {
    return this.aws.apiUrl;
  }

  async stop(): Promise<void> {
    await this.aws.stop();
  }
}
