/**
 * Who is calling. Flows need to tell an API token from a console session (flows are changed only
 * in the console), so the credential kind travels with the caller.
 */
export interface Caller {
  uid: string;
  accountName: string;
  isAdmin: boolean;
  credential: { kind: 'token'; tokenId: string; readOnly: boolean } | { kind: 'session'; sessionHash: string };
}

export const isReadOnly = (caller: Caller | null): boolean =>
  caller?.credential.kind === 'token' && caller.credential.readOnly;
