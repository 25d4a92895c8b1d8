/**
 * Text search on Amazon OpenSearch (lib/constructs/search-domain.ts): off by default; with the
 * stack configured for search, one domain (HTTPS only, encrypted, slow and application logs in
 * CloudWatch, an access policy without anonymous principals), and exactly the functions granted
 * `searchIndexes` get es:ESHttp* on it and OPENSEARCH_URL. cdk-nag passes, with every
 * acknowledgement's reason in the template. Templates only, no bundling.
 */
import { describe, expect, it } from 'vitest';
import { ENV } from '../../functions/env-names.js';
import { FAMILIES, WORKERS } from '../../functions/http/route-table.js';
import { nagApp } from '../support/nag-app.js';

function synth(search: boolean) {
  const { stateless, synth: run } = nagApp(search ? { search: {} } : {});
  const { error, report, template } = run();
  return { stateless, template: template('LinkedDataPlatform-Stateless'), error, report };
}

const ofType = (template: { Resources: Record<string, any> }, type: string) => Object.entries(template.Resources).filter(([, r]) => r.Type === type);

/** es:* actions in the policies attached to a function's role. */
function esActions(template: { Resources: Record<string, any> }, roleLogicalId: string): string[] {
  const actions: string[] = [];
  for (const [, policy] of ofType(template, 'AWS::IAM::Policy')) {
    if (!JSON.stringify(policy.Properties.Roles).includes(roleLogicalId)) continue;
    for (const s of policy.Properties.PolicyDocument.Statement) for (const a of [s.Action].flat()) if (String(a).startsWith('es:')) actions.push(a);
  }
  return actions.sort();
}

function functionOf(template: { Resources: Record<string, any> }, idPrefix: string) {
  const found = ofType(template, 'AWS::Lambda::Function').find(([id]) => id.startsWith(idPrefix));
  if (!found) throw new Error(`no function ${idPrefix}`);
  const [, fn] = found;
  return { env: fn.Properties.Environment?.Variables ?? {}, role: fn.Properties.Role['Fn::GetAtt'][0] as string };
}

describe('search domain', () => {
  it('is not made by default: text search runs on the embedded engine with the data bucket', () => {
    const { template, stateless } = synth(false);
    expect(ofType(template, 'AWS::OpenSearchService::Domain')).toEqual([]);
    expect(stateless.searchDomain).toBeUndefined();
    const search = functionOf(template, 'SearchFunction');
    expect(search.env[ENV.opensearchUrl]).toBeUndefined();
    expect(search.env[ENV.dataBucketName]).toBeDefined();
    expect(esActions(template, search.role)).toEqual([]);
  });

  describe('configured for search', () => {
    const { template, error, report } = synth(true);

    it('makes one encrypted, HTTPS-only domain with its logs and no anonymous access', () => {
      const domains = ofType(template, 'AWS::OpenSearchService::Domain');
      expect(domains).toHaveLength(1);
      const props = domains[0]![1].Properties;
      expect(props.EncryptionAtRestOptions).toEqual({ Enabled: true });
      expect(props.NodeToNodeEncryptionOptions).toEqual({ Enabled: true });
      expect(props.DomainEndpointOptions).toEqual({ EnforceHTTPS: true, TLSSecurityPolicy: 'Policy-Min-TLS-1-2-2019-07' });
      expect(Object.keys(props.LogPublishingOptions).sort()).toEqual(['ES_APPLICATION_LOGS', 'INDEX_SLOW_LOGS', 'SEARCH_SLOW_LOGS']);
      expect(props.ClusterConfig).toMatchObject({ InstanceCount: 2, ZoneAwarenessEnabled: true });
      for (const s of props.AccessPolicies.Statement) expect(JSON.stringify(s.Principal)).not.toContain('"*"');
      expect(ofType(template, 'AWS::Logs::ResourcePolicy')).toHaveLength(1);
      // L1 only: no custom resource (and no function of its own) for access or log policies.
      expect(ofType(template, 'Custom::OpenSearchAccessPolicy')).toEqual([]);
    });

    it('grants exactly the functions declaring searchIndexes, read or write, and tells them the endpoint', () => {
      const pascal = (name: string) => name.replace(/(^|[-_])([a-z0-9])/g, (_m, _s: string, c: string) => c.toUpperCase());
      const declared = [
        ...Object.entries(FAMILIES).map(([name, spec]) => [pascal(name), (spec.grants as { searchIndexes?: string }).searchIndexes] as const),
        ...Object.entries(WORKERS).map(([name, spec]) => [pascal(name), (spec.grants as { searchIndexes?: string }).searchIndexes] as const),
      ];
      expect(declared.filter(([, use]) => use).map(([n, use]) => `${n}:${use}`).sort()).toEqual(['FlowTaskWorker:write', 'ImportWorker:write', 'Search:read', 'Services:write']);
      for (const [name, use] of declared) {
        const fn = functionOf(template, `${name}Function`);
        const actions = esActions(template, fn.role);
        if (!use) {
          expect(actions, name).toEqual([]);
          expect(fn.env[ENV.opensearchUrl], name).toBeUndefined();
          continue;
        }
        expect(actions, name).toEqual(use === 'read' ? ['es:ESHttpGet', 'es:ESHttpHead', 'es:ESHttpPost'] : ['es:ESHttpDelete', 'es:ESHttpGet', 'es:ESHttpHead', 'es:ESHttpPost', 'es:ESHttpPut']);
        expect(JSON.stringify(fn.env[ENV.opensearchUrl])).toContain('DomainEndpoint');
        expect(fn.env[ENV.opensearchSigning]).toBe('es');
      }
    });

    it('passes cdk-nag, acknowledging OS1, OS3 and OS4 with reasons in the template', () => {
      const findings = (report?.pluginReports ?? []).flatMap((p: any) => p.violations.flatMap((v: any) => v.violatingConstructs.map((c: any) => `${v.ruleName} at ${c.constructPath}`)));
      expect(findings).toEqual([]);
      expect(error).toBeUndefined();
      const [, domain] = ofType(template, 'AWS::OpenSearchService::Domain')[0]!;
      const acks = (domain.Metadata.cdk_nag.rules_to_suppress as { id: string; reason: string }[]).filter((a) => a.id.startsWith('AwsSolutions-'));
      expect(acks.map((a) => a.id).sort()).toEqual(['AwsSolutions-OS1', 'AwsSolutions-OS3', 'AwsSolutions-OS4']);
      for (const a of acks) expect(a.reason.length).toBeGreaterThan(40);
    });
  });
});
