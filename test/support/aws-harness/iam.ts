/**
 * IAM as AWS evaluates it, for the calls the functions (and the services acting as the template's
 * roles) make: the identity policies the template attaches to the caller's role, the target
 * bucket's policy as resource policy, evaluated by @cloud-copilot/iam-simulate. A harness option
 * removes grants (one action from a role) so a test can show a function fails with one too few.
 * Callers are roles: a function's (its logical id is its access key id), an ECS task's task role
 * (the task's access key id is the role's logical id, see ecs.ts), a state machine's or a
 * schedule's; `removeGrants` names any of them (e.g. `WorkerTaskTaskRole` for the worker task).
 */
import { runSimulation } from '@cloud-copilot/iam-simulate';
import { ACCOUNT, type DeployedApp } from './template.js';

export interface IamRequest {
  action: string;
  resource: string;
  /** Condition keys of the request (`events:source`, `iam:PassedToService`, ...). */
  context?: Record<string, string | string[]>;
}

export interface IamDecision {
  allowed: boolean;
  /** AWS's wording: `User: <arn> is not authorized to perform: <action> on resource: <arn> because ...`. */
  message: string;
}

/**
 * A grant to take away: `action` (e.g. `s3:DeleteObject`) from the role of `functionOrRole` (a
 * function's or role's logical id, or its start). Every action pattern of the role's statements
 * that covers it goes (so removing `s3:DeleteObject` also removes a granted `s3:DeleteObject*`).
 */
export interface RemovedGrant {
  functionOrRole: string;
  action: string;
}

/**
 * Keys the service authorization reference types as lists. EventBridge authorizes PutEvents entry
 * by entry, each with one source and detail type, and its own documented policies (and CDK's)
 * use plain `StringEquals` on them; the simulator requires a set operator on list keys, so such
 * conditions are read as `ForAnyValue:` over the entry's one value, which is the same test.
 */
const ARRAY_KEYS = new Set(['events:source', 'events:detail-type']);

function withSetOperators(condition: Record<string, Record<string, unknown>> | undefined): Record<string, Record<string, unknown>> | undefined {
  if (!condition) return condition;
  const out: Record<string, Record<string, unknown>> = {};
  for (const [operator, keys] of Object.entries(condition)) {
    for (const [key, value] of Object.entries(keys)) {
      const op = ARRAY_KEYS.has(key.toLowerCase()) && !operator.includes(':') ? `ForAnyValue:${operator}` : operator;
      out[op] = { ...out[op], [key]: value };
    }
  }
  return out;
}

export class IamEvaluator {
  private readonly cache = new Map<string, Promise<IamDecision>>();
  /** Every decision made, in order: tests look for refusals here. */
  readonly log: { principal: string; request: IamRequest; allowed: boolean }[] = [];

  constructor(
    private readonly app: DeployedApp,
    private readonly removed: RemovedGrant[] = [],
  ) {}

  roleOf(functionOrRole: string): string {
    const fn = this.app.functions.find((f) => f.logicalId === functionOrRole || f.name === functionOrRole || f.logicalId.startsWith(functionOrRole));
    if (fn) return fn.roleLogicalId;
    const role = [...this.app.roles.keys()].find((id) => id === functionOrRole || id.startsWith(functionOrRole));
    if (!role) throw new Error(`harness: no function or role ${functionOrRole}`);
    return role;
  }

  private policiesOf(roleLogicalId: string): { name: string; policy: unknown }[] {
    const role = this.app.roles.get(roleLogicalId);
    if (!role) throw new Error(`harness: no role ${roleLogicalId}`);
    const removed = this.removed.filter((r) => this.roleOf(r.functionOrRole) === roleLogicalId).map((r) => r.action.toLowerCase());
    const covers = (pattern: string, action: string) => new RegExp(`^${pattern.toLowerCase().split('*').map((x) => x.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`).test(action);
    return role.policies.map((p) => ({
      name: p.name,
      policy: {
        ...p.document,
        Statement: p.document.Statement.map((original: any) => {
          const s = original.Condition ? { ...original, Condition: withSetOperators(original.Condition) } : original;
          if (removed.length === 0 || s.Effect !== 'Allow') return s;
          const actions = (Array.isArray(s.Action) ? s.Action : [s.Action]) as string[];
          const kept = actions.filter((a) => !removed.some((r) => covers(a, r)));
          // A statement left with no action grants nothing: keep its shape with an action nobody calls.
          return { ...s, Action: kept.length > 0 ? kept : ['harness:Nothing'] };
        }),
      },
    }));
  }

  /** The bucket policy when the resource is a bucket or an object in one. */
  private resourcePolicyOf(resource: string): unknown {
    const m = /^arn:aws:s3:::([^/]+)/.exec(resource);
    return m ? this.app.buckets.find((b) => b.name === m[1])?.policy : undefined;
  }

  /** Evaluates one request made as `roleLogicalId` (session `session`). */
  decide(roleLogicalId: string, session: string, request: IamRequest): Promise<IamDecision> {
    const principal = `arn:aws:sts::${ACCOUNT}:assumed-role/${roleLogicalId}/${session}`;
    const context: Record<string, string | string[]> = {
      // The SDK talks to AWS over TLS; the buckets' policies deny anything else.
      'aws:SecureTransport': 'true',
      'aws:PrincipalAccount': ACCOUNT,
      'aws:PrincipalArn': `arn:aws:iam::${ACCOUNT}:role/${roleLogicalId}`,
    };
    for (const [k, v] of Object.entries(request.context ?? {})) context[k] = ARRAY_KEYS.has(k) && !Array.isArray(v) ? [v] : v;
    const key = JSON.stringify([roleLogicalId, request.action, request.resource, context]);
    let decision = this.cache.get(key);
    if (!decision) {
      decision = this.simulate(roleLogicalId, principal, request, context);
      this.cache.set(key, decision);
    }
    return decision.then((d) => {
      this.log.push({ principal: roleLogicalId, request, allowed: d.allowed });
      return d;
    });
  }

  private async simulate(roleLogicalId: string, principal: string, request: IamRequest, context: Record<string, string | string[]>): Promise<IamDecision> {
    const resourcePolicy = this.resourcePolicyOf(request.resource);
    const result = await runSimulation(
      {
        request: { principal, action: request.action, resource: { resource: request.resource, accountId: ACCOUNT }, contextVariables: context },
        identityPolicies: this.policiesOf(roleLogicalId),
        serviceControlPolicies: [],
        resourceControlPolicies: [],
        ...(resourcePolicy ? { resourcePolicy } : {}),
      },
      {},
    );
    if (result.resultType === 'error') throw new Error(`harness: IAM simulation failed for ${request.action} on ${request.resource}: ${JSON.stringify(result.errors)}`);
    const allowed = result.overallResult === 'Allowed';
    const why = result.overallResult === 'ExplicitlyDenied' ? 'with an explicit deny' : 'because no identity-based policy allows the ' + request.action + ' action';
    return { allowed, message: `User: ${principal} is not authorized to perform: ${request.action} on resource: ${request.resource} ${why}` };
  }
}
