/** Stop run: ends the run as aborted, with an optional reason for the run log. */
import { substituted } from './task-context.js';
import type { TaskTypeDefinition } from './task-type.js';

export const stopRun: TaskTypeDefinition = {
  type: 'stopRun',
  title: 'Stop run',
  kind: 'control',
  check(s, ctx) {
    s.text('reason', { what: 'a reason, for the run log' });
    if (ctx.successors.length > 0) {
      ctx.problem(
        ctx.taskPath,
        'stop-run-successor',
        `Stop run ends the run, so the tasks after it (${ctx.successors.join(', ')}) could never start; remove those connections.`,
      );
    }
    s.finish();
  },
  async run(ctx) {
    const reason = substituted(ctx, ctx.settings.reason);
    ctx.log(reason ? `Stop run: ${reason}` : 'Stop run.');
    return { reason };
  },
};
