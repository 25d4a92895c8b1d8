import { App, CfnOutput, Stack, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { StatefulStack } from '../lib/stateful-stack.js';
import { StatelessStack } from '../lib/stateless-stack.js';
import { ConsoleSite } from '../lib/constructs/console-site.js';
import { CONSOLE_DIST, ensureConsoleBuild } from './console-build.js';

// The console's build goes to S3 with the stacks (offline: Vite and the sources are local).
await ensureConsoleBuild({ log: (line) => console.error(line) });

/** The CDK app: data in one stack, the replaceable API and functions in the other. */
const app = new App();
// cdk-nag's AwsSolutions pack checks every synth: a finding that is neither fixed nor acknowledged
// with its reason (lib/nag.ts) fails it. Acknowledgements are written into the template's Metadata.
Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { writeSuppressionsToCloudFormation: true }));
// Environment-agnostic unless the CLI knows the target account/region.
const account = process.env.CDK_DEFAULT_ACCOUNT;
const region = process.env.CDK_DEFAULT_REGION;
const env = account || region ? { account, region } : undefined;

const stateful = new StatefulStack(app, 'LinkedDataPlatform-Stateful', { env });
const stateless = new StatelessStack(app, 'LinkedDataPlatform-Stateless', {
  env,
  table: stateful.table,
  dataBucket: stateful.dataBucket,
  uploadsBucket: stateful.uploadsBucket,
  artifactsBucket: stateful.artifactsBucket,
  // The platform's sender address, verified in SES: `cdk deploy -c mailFrom=no-reply@your.domain`.
  mailFrom: app.node.tryGetContext('mailFrom'),
  // Behind a custom domain: `cdk deploy -c publicApiUrl=https://api.your.domain`.
  publicApiUrl: app.node.tryGetContext('publicApiUrl'),
  // Text search on Amazon OpenSearch Service: `cdk deploy -c search=opensearch` (default: the embedded engine, indexes in the data bucket).
  search: app.node.tryGetContext('search') === 'opensearch' ? {} : undefined,
});

// The console (issue 17): its build in S3 behind CloudFront, whose default behaviour is the API, so both are
// one site and the console's session cookie is the API's. Deploy with `-c publicApiUrl=<ConsoleSiteUrl>`.
const consoleStack = new Stack(app, 'LinkedDataPlatform-Console', { env, description: 'Linked-data platform: the console and the API on one CloudFront site' });
const site = new ConsoleSite(consoleStack, 'ConsoleSite', { api: stateless.api, buildDir: CONSOLE_DIST, accessLogsBucket: stateful.accessLogsBucket });
new CfnOutput(consoleStack, 'ConsoleSiteUrl', { value: site.url, description: 'The site: the API at /, the console at /console/' });
