/** The caller a run acts as: its starter, through the run's own platform token. */
import type { AccountRecord } from '../../accounts/accounts.js';
import type { Caller } from '../../shared/caller.js';

/** A token caller for the run's platform token (`tokenId`), acting as the starter's account. */
export function starterCaller(account: AccountRecord, tokenId: string): Caller {
  return {
    uid: account.uid,
    accountName: account.accountName,
    isAdmin: account.isAdmin === true,
    credential: { kind: 'token', tokenId, readOnly: false },
  };
}
