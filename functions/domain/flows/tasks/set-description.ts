/** Set description: sets the run's description (shown in the run list). */
import { charLength, FLOW_LIMITS } from '../limits.js';
import { substituted, TaskFailure } from './task-context.js';
import type { TaskTypeDefinition } from './task-type.js';

export const setDescription: TaskTypeDefinition = {
  type: 'setDescription',
  title: 'Set description',
  kind: 'control',
  check(s) {
    s.text('description', { required: true, max: FLOW_LIMITS.runDescription, what: 'the run description' });
    s.finish();
  },
  async run(ctx) {
    const description = substituted(ctx, ctx.settings.description);
    if (charLength(description) > FLOW_LIMITS.runDescription) {
      throw new TaskFailure(`The description has ${charLength(description)} characters after substitution; at most ${FLOW_LIMITS.runDescription} are allowed.`);
    }
    await ctx.setDescription(description);
    ctx.log('Set the run description.');
    return { description };
  },
};
