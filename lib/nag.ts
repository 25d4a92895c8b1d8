/**
 * cdk-nag (AwsSolutions pack) acknowledgements: every finding we keep is acknowledged here or at
 * the construct it concerns, each with the reason it is right for this platform. cdk-nag reads
 * them from the construct tree; with `writeSuppressionsToCloudFormation` (bin/platform.ts and the
 * infra test) they are also written into each resource's template Metadata as
 * `cdk_nag.rules_to_suppress`, so `cdk synth` shows what was acknowledged and why.
 *
 * No import of cdk-nag itself: the stacks only record acknowledgements (aws-cdk-lib's
 * Validations); the app and the test register the rule pack.
 */
import { Stack, Validations } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';

/** The rule pack whose findings these are. */
export const NAG_PACK = 'AwsSolutions';

/**
 * A template value as cdk-nag names it in an IAM5 finding (its `flattenCfnReference`): `Ref` as
 * `<Name>`, `Fn::GetAtt` as `<Id.Attr>`, `Fn::ImportValue` as the export's name, joins joined.
 */
export function nagName(scope: IConstruct, value: unknown): string {
  const visit = (node: unknown): string => {
    if (node === undefined) return '';
    if (typeof node === 'string') return node.replace(/\$\{/g, '<').replace(/\}/g, '>');
    const o = node as Record<string, any>;
    if (o['Fn::Join']) return (o['Fn::Join'][1] as unknown[]).map(visit).join(o['Fn::Join'][0]);
    if (o['Fn::Sub']) return visit(o['Fn::Sub']);
    if (o['Fn::GetAtt']) return `<${visit(o['Fn::GetAtt'][0])}.${visit(o['Fn::GetAtt'][1])}>`;
    if (o['Fn::ImportValue']) return visit(o['Fn::ImportValue']);
    if (o.Ref) return `<${visit(o.Ref)}>`;
    return JSON.stringify(node);
  };
  return visit(Stack.of(scope).resolve(value));
}

/**
 * Acknowledges the pack's rule `rule` (e.g. `APIG4`, or one finding: `IAM5[Resource::*]`) on
 * `scope` and everything under it, with the reason.
 */
export function acknowledge(scope: IConstruct, rule: string, reason: string): void {
  if (!reason.trim()) throw new Error(`acknowledging ${rule} needs a reason`);
  Validations.of(scope).acknowledge({ id: `${NAG_PACK}-${rule}`, reason });
}

/**
 * Acknowledges the IAM5 finding of one wildcard resource granted by the policies under `scope`.
 * `resource` is the value given to the policy statement (a token is named as cdk-nag names it;
 * a reference to another stack must already be its import, see `StatelessStack`).
 */
export function acknowledgeWildcardResource(scope: IConstruct, resource: string, reason: string): void {
  acknowledge(scope, `IAM5[Resource::${nagName(scope, resource)}]`, reason);
}
