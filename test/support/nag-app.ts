/**
 * Both stacks synthesized as bin/platform.ts registers them (the CLI's context, cdk-nag's
 * AwsSolutions pack writing its acknowledgements into the templates), without bundling: for the
 * infra tests that read what cdk-nag found and what the templates say. Output folders are removed
 * after the test file.
 */
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { afterAll } from 'vitest';
import { StatefulStack } from '../../lib/stateful-stack.js';
import { StatelessStack, type StatelessStackProps } from '../../lib/stateless-stack.js';
import { REPO_ROOT } from './stacks.js';

export interface NagReport {
  pluginReports: { pluginName: string; conclusion: string; violations: { ruleName: string; violatingConstructs: { constructPath: string }[] }[] }[];
}

export interface NagSynthesis {
  /** The error cdk-nag's validation raised, if any. */
  error?: Error;
  report?: NagReport;
  /** A synthesized stack's template, by stack name. */
  template(stack: 'LinkedDataPlatform-Stateful' | 'LinkedDataPlatform-Stateless'): { Resources: Record<string, any> };
}

const outdirs: string[] = [];
afterAll(() => {
  for (const dir of outdirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** The app with both stacks; `props` adds to the stateless stack's, `change` runs before synthesis. */
export function nagApp(
  props: Partial<StatelessStackProps> = {},
  change?: (stateless: StatelessStack) => void,
): { app: App; stateless: StatelessStack; synth: () => NagSynthesis } {
  const { context } = JSON.parse(readFileSync(join(REPO_ROOT, 'cdk.json'), 'utf8'));
  const app = new App({ context: { ...context, 'aws:cdk:bundling-stacks': [] } });
  outdirs.push(app.outdir);
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { writeSuppressionsToCloudFormation: true }));
  const stateful = new StatefulStack(app, 'LinkedDataPlatform-Stateful');
  const stateless = new StatelessStack(app, 'LinkedDataPlatform-Stateless', {
    table: stateful.table,
    dataBucket: stateful.dataBucket,
    uploadsBucket: stateful.uploadsBucket,
    artifactsBucket: stateful.artifactsBucket,
    ...props,
  });
  change?.(stateless);
  return {
    app,
    stateless,
    synth: () => {
      let error: Error | undefined;
      try {
        app.synth();
      } catch (e) {
        error = e as Error;
      }
      const file = join(app.outdir, 'validation-report.json');
      return {
        error,
        report: existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as NagReport) : undefined,
        template: (stack) => JSON.parse(readFileSync(join(app.outdir, `${stack}.template.json`), 'utf8')),
      };
    },
  };
}
