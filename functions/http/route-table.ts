/**
 * The one route table of the platform. Pure data: the CDK stateless stack creates an API Gateway
 * route per entry, wired to the Lambda function of the entry's family; the embedded server matches
 * requests against the same entries. Each family is one small Lambda function whose handler
 * module is `functions/handlers/<family>.ts`.
 */
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'HEAD';

export type Access = 'R' | 'RW';

export interface FamilySpec {
  /** What the family's function may touch; the stack grants exactly this, nothing more. */
  grants: {
    table?: Access;
    dataBucket?: Access;
    uploadsBucket?: Access;
    artifactsBucket?: Access;
  };
  memoryMb: number;
  timeoutSeconds: number;
}

export const FAMILIES = {
  info: { grants: { table: 'R' }, memoryMb: 256, timeoutSeconds: 5 },
  auth: { grants: { table: 'RW' }, memoryMb: 512, timeoutSeconds: 10 },
  accounts: { grants: { table: 'RW' }, memoryMb: 512, timeoutSeconds: 10 },
  datasets: { grants: { table: 'RW', dataBucket: 'RW' }, memoryMb: 512, timeoutSeconds: 30 },
} as const satisfies Record<string, FamilySpec>;

export type Family = keyof typeof FAMILIES;

export interface RouteSpec {
  method: HttpMethod;
  /** API Gateway style path: `{name}` matches one segment. */
  path: string;
  family: Family;
  operation: string;
}

const route = (method: HttpMethod, path: string, family: Family, operation: string): RouteSpec => ({
  method,
  path,
  family,
  operation,
});

export const ROUTES: readonly RouteSpec[] = [
  route('GET', '/info', 'info', 'getInfo'),

  route('GET', '/me', 'auth', 'getMe'),
  route('POST', '/login', 'auth', 'login'),
  route('POST', '/logout', 'auth', 'logout'),

  route('GET', '/accounts', 'accounts', 'listAccounts'),
  route('POST', '/accounts', 'accounts', 'createAccount'),
  route('GET', '/accounts/{account}', 'accounts', 'getAccount'),
  route('PATCH', '/accounts/{account}', 'accounts', 'updateAccount'),
  route('DELETE', '/accounts/{account}', 'accounts', 'deleteAccount'),
  route('GET', '/accounts/{account}/orgs', 'accounts', 'listOrganizationsOfUser'),
  route('POST', '/accounts/{account}/orgs', 'accounts', 'createOrganizationForUser'),
  route('GET', '/accounts/{account}/members', 'accounts', 'listMembers'),
  route('POST', '/accounts/{account}/members', 'accounts', 'addMember'),
  route('GET', '/accounts/{account}/members/{member}', 'accounts', 'getMember'),
  route('PATCH', '/accounts/{account}/members/{member}', 'accounts', 'updateMember'),
  route('DELETE', '/accounts/{account}/members/{member}', 'accounts', 'removeMember'),
  route('GET', '/accounts/{account}/roles', 'accounts', 'listRoles'),
  route('POST', '/accounts/{account}/roles', 'accounts', 'createRole'),
  route('PATCH', '/accounts/{account}/roles/{role}', 'accounts', 'updateRole'),
  route('DELETE', '/accounts/{account}/roles/{role}', 'accounts', 'deleteRole'),
  route('GET', '/accounts/{account}/tokens', 'accounts', 'listTokens'),
  route('POST', '/accounts/{account}/tokens', 'accounts', 'createToken'),
  route('DELETE', '/accounts/{account}/tokens/{tokenId}', 'accounts', 'deleteToken'),

  route('GET', '/datasets', 'datasets', 'listAllDatasets'),
  route('GET', '/datasets/{account}', 'datasets', 'listAccountDatasets'),
  route('POST', '/datasets/{account}', 'datasets', 'createDataset'),
  route('GET', '/datasets/{account}/{dataset}', 'datasets', 'getDataset'),
  route('PATCH', '/datasets/{account}/{dataset}', 'datasets', 'updateDataset'),
  route('DELETE', '/datasets/{account}/{dataset}', 'datasets', 'deleteDataset'),
  route('GET', '/datasets/{account}/{dataset}/prefixes', 'datasets', 'getPrefixes'),
  route('PATCH', '/datasets/{account}/{dataset}/prefixes', 'datasets', 'updatePrefixes'),
  route('DELETE', '/datasets/{account}/{dataset}/prefixes/{prefix}', 'datasets', 'deletePrefix'),
];

/** API Gateway route key, e.g. `GET /datasets/{account}`. */
export const routeKey = (r: Pick<RouteSpec, 'method' | 'path'>): string => `${r.method} ${r.path}`;

export const routesOfFamily = (family: Family): RouteSpec[] => ROUTES.filter((r) => r.family === family);
