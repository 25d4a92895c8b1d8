/**
 * Operator CLI for a deployed platform. It talks to the same table the Lambda functions use,
 * through the AWS composition root (TABLE_NAME and the usual AWS credentials in the environment).
 *
 *   npx tsx bin/cli.ts create-admin --account admin --api-url https://api.example.org
 *
 * Prints the administrator's API token once (and the password when it generated one); nothing is
 * logged elsewhere. ADMIN_PASSWORD sets the password instead of generating one.
 */
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
const { awsServices } = await import('../functions/composition/aws.js');

const usage = 'usage: cli.ts create-admin --account <name> --api-url <https://api...>';
const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: { account: { type: 'string', default: 'admin' }, 'api-url': { type: 'string' } },
});

if (positionals[0] !== 'create-admin' || !values['api-url']) {
  console.error(usage);
  process.exit(2);
}

const services = await awsServices();
const generated = process.env.ADMIN_PASSWORD ? undefined : randomBytes(18).toString('base64url');
const { account, created } = await services.accounts.ensureAdministrator(values.account!, process.env.ADMIN_PASSWORD ?? generated!);
const { token } = await services.auth.issueToken(
  account,
  { description: 'Issued by the operator CLI', readOnly: false },
  values['api-url'].replace(/\/+$/, ''),
);
console.log(created ? `Created administrator "${account.accountName}".` : `Administrator "${account.accountName}" exists; issued a new token.`);
if (created && generated) console.log(`Password: ${generated}`);
console.log(`API token (shown once): ${token}`);
