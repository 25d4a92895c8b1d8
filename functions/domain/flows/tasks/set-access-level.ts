/** Set access level: makes a dataset Public, Internal or Private. */
import { isSingleReference } from '../blueprints/variables.js';
import { datasetRef } from './settings-reader.js';
import { datasetOf, substituted, TaskFailure } from './task-context.js';
import type { TaskTypeDefinition } from './task-type.js';

const ACCESS_LEVELS = ['public', 'internal', 'private'] as const;

export const setAccessLevel: TaskTypeDefinition = {
  type: 'setAccessLevel',
  title: 'Set access level',
  kind: 'data',
  check(s) {
    datasetRef(s, 'dataset', true);
    s.choice('accessLevel', ['Public', 'Internal', 'Private'] as const, { required: true, allowReference: true });
    s.finish();
  },
  async run(ctx, services) {
    const { account, dataset } = datasetOf(ctx, ctx.settings.dataset, 'dataset');
    const written = substituted(ctx, ctx.settings.accessLevel).trim();
    const accessLevel = ACCESS_LEVELS.find((level) => level === written.toLowerCase());
    if (!accessLevel) {
      throw new TaskFailure(`"${written}" is not an access level; use Public, Internal or Private${typeof ctx.settings.accessLevel === 'string' && isSingleReference(ctx.settings.accessLevel) ? ` (from ${ctx.settings.accessLevel.trim()})` : ''}.`);
    }
    const before = (await services.access.writableDataset(ctx.caller, account, dataset, 'change datasets')).dataset.accessLevel;
    await services.datasets.update(ctx.caller, account, dataset, { accessLevel });
    ctx.log(before === accessLevel ? `${account}/${dataset} is already ${accessLevel}.` : `Changed ${account}/${dataset} from ${before} to ${accessLevel}.`);
    return { accessLevel, previous: before };
  },
};
