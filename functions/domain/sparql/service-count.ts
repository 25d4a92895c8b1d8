import type { Platform } from '../shared/platform.js';
import { ConflictError } from '../shared/errors.js';

const MAX_RETRIES = 8;

/** Records how many services a dataset has (its `serviceCount`), retrying a concurrent change. */
export async function countServices(platform: Platform, datasetId: string): Promise<void> {
  for (let attempt = 0; attempt < MAX_RETRIES; attempt++) {
    const dataset = await platform.store.getDatasetById(datasetId);
    if (!dataset) return;
    const serviceCount = (await platform.store.listServices(datasetId)).length;
    if (serviceCount === dataset.serviceCount) return;
    try {
      await platform.store.updateDataset({ ...dataset, serviceCount, revision: dataset.revision + 1 });
      return;
    } catch (e) {
      if (!(e instanceof ConflictError)) throw e;
    }
  }
}
