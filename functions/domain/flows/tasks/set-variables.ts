/**
 * Set variables: gives output variables of the flow a value (a text, `?name` references
 * substituted) that the tasks after it read.
 */
import { childPath } from '../blueprints/problems.js';
import { substituted } from './task-context.js';
import type { TaskTypeDefinition } from './task-type.js';

export const setVariables: TaskTypeDefinition = {
  type: 'setVariables',
  title: 'Set variables',
  kind: 'control',
  check(s, ctx) {
    const values = s.textMap('values', { required: true, what: 'a text' });
    if (values && Object.keys(values).length === 0) {
      ctx.problem(s.at('values'), 'invalid', 'Set at least one output variable.');
    }
    for (const name of Object.keys(values ?? {})) {
      if (ctx.isOutputVariable(name)) continue;
      ctx.problem(
        childPath(s.at('values'), name),
        'unknown-output-variable',
        ctx.isFlowVariable(name)
          ? `?${name} is a flow variable; Set variables only sets output variables (define one with another name).`
          : `?${name} is not an output variable of this flow; add it to "outputVariables" first.`,
      );
    }
    s.finish();
  },
  async run(ctx) {
    const set = (ctx.settings.values ?? {}) as Record<string, string>;
    const variables = Object.fromEntries(Object.entries(set).map(([name, value]) => [name, substituted(ctx, value)]));
    for (const name of Object.keys(variables)) ctx.log(`Set ?${name}.`);
    return { variables };
  },
  setsVariables: () => true,
};
