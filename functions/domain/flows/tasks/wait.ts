/** Wait: pauses the run for a number of seconds (a number, or a ?variable holding one). */
import { FLOW_LIMITS } from '../limits.js';
import { isSingleReference } from '../blueprints/variables.js';
import { substituted, TaskFailure } from './task-context.js';
import type { TaskTypeDefinition } from './task-type.js';

export const wait: TaskTypeDefinition = {
  type: 'wait',
  title: 'Wait',
  kind: 'control',
  check(s, ctx) {
    const key = 'seconds';
    const v = s.value[key];
    if (typeof v === 'number') {
      const n = s.integer(key, { min: 0, max: FLOW_LIMITS.taskTimeoutSeconds, required: true });
      if (n !== undefined && ctx.timeoutSeconds !== undefined && n > ctx.timeoutSeconds) {
        ctx.problem(s.at(key), 'invalid', `The wait (${n} s) is longer than the task's Timeout (${ctx.timeoutSeconds} s), so it would always time out.`);
      }
    } else {
      const text = s.text(key, { required: true, what: 'whole seconds (a number, or a ?variable)' });
      if (text !== undefined && !/^\s*\d+\s*$/.test(text) && !isSingleReference(text)) {
        ctx.problem(s.at(key), 'invalid', `Give whole seconds: a number, or a single ?variable holding one.`);
      }
    }
    s.finish();
  },
  async run(ctx) {
    const raw = ctx.settings.seconds;
    const written = typeof raw === 'number' ? String(raw) : substituted(ctx, raw);
    const seconds = Number(written.trim());
    if (written.trim() === '' || !Number.isInteger(seconds) || seconds < 0) {
      throw new TaskFailure(`Wait: "${written}" is not a whole number of seconds${typeof raw === 'string' && isSingleReference(raw) ? ` (from ${raw.trim()})` : ''}.`);
    }
    ctx.log(`Waiting ${seconds} s.`);
    return { seconds };
  },
};
