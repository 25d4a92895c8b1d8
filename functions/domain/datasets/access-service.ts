import type { AccountRecord } from '../accounts/accounts.js';
import { AccountAccessService } from '../accounts/account-access.js';
import type { Caller } from '../shared/caller.js';
import type { DatasetRecord } from './datasets.js';
import { canReadDataset } from './datasets.js';
import { NotFoundError } from '../shared/errors.js';

/** Resolves what a caller may do on accounts (see AccountAccessService) and on their datasets. */
export class AccessService extends AccountAccessService {
  async canReadDataset(caller: Caller | null, dataset: DatasetRecord, owner: AccountRecord): Promise<boolean> {
    if (dataset.accessLevel !== 'private') return canReadDataset(dataset.accessLevel, caller !== null, false);
    return (await this.accountAccess(caller, owner)).isMember;
  }

  /** Loads a dataset the caller may read, or answers 404 exactly as for a missing one. */
  async readableDataset(
    caller: Caller | null,
    accountName: string,
    datasetName: string,
  ): Promise<{ owner: AccountRecord; dataset: DatasetRecord }> {
    const missing = () => new NotFoundError(`Dataset "${accountName}/${datasetName}" does not exist.`);
    const owner = await this.platform.store.getAccountByName(accountName);
    if (!owner) throw missing();
    const dataset = await this.platform.store.getDataset(owner.uid, datasetName);
    if (!dataset || !(await this.canReadDataset(caller, dataset, owner))) throw missing();
    return { owner, dataset };
  }

  /** A dataset the caller may change: 404 when it may not even see it, else 401/403 without the permission. */
  async writableDataset(
    caller: Caller | null,
    accountName: string,
    datasetName: string,
    what: string,
  ): Promise<{ owner: AccountRecord; dataset: DatasetRecord }> {
    const found = await this.readableDataset(caller, accountName, datasetName);
    await this.require(caller, found.owner, 'writeDatasets', what);
    return found;
  }
}
