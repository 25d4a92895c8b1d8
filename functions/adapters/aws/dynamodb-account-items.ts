/**
 * The account side of the metadata store on the single table: the instance secret, accounts and
 * their name claims, memberships, tokens, sign-in attempts and sessions.
 */
import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ConflictError } from '../../domain/shared/errors.js';
import { nameKey } from '../../domain/shared/names.js';
import type { Batch, ListRequest, LoginAttempts } from '../../ports/metadata-store.js';
import type { AccountRecord, MembershipRecord, SessionRecord, TokenRecord } from '../../ports/records/accounts.js';
import { DynamoDbTable, isConditionFailure, type Item } from './dynamodb-table.js';
import { K } from './dynamodb-metadata-keys.js';

/** Stacked under DatasetItems and DynamoDbMetadataStore, so the whole store stays one object. */
export abstract class AccountItems extends DynamoDbTable {

  async getInstanceSecret(): Promise<string | null> {
    return (await this.get<{ secret: string }>(K.instance))?.secret ?? null;
  }

  async ensureInstanceSecret(candidate: string): Promise<string> {
    const existing = await this.getInstanceSecret();
    if (existing) return existing;
    try {
      await this.putNew({ ...K.instance, secret: candidate }, 'instance secret exists');
      return candidate;
    } catch (e) {
      if (!(e instanceof ConflictError)) throw e;
      const winner = await this.get<{ secret: string }>(K.instance);
      if (!winner) throw new Error('instance secret vanished');
      return winner.secret;
    }
  }

  private accountItem(a: AccountRecord): Item {
    return {
      ...a,
      ...K.account(a.uid),
      gsi1pk: 'ACCOUNTS',
      gsi1sk: nameKey(a.accountName),
      ...(a.isAdmin ? { gsi2pk: 'ADMINS', gsi2sk: a.uid } : {}),
    };
  }

  async createAccount(account: AccountRecord): Promise<void> {
    const message = `An account named "${account.accountName}" already exists.`;
    await this.putNew({ ...K.accountName(account.accountName), uid: account.uid }, message);
    try {
      await this.putNew(this.accountItem(account), message);
    } catch (e) {
      await this.delete(K.accountName(account.accountName));
      throw e;
    }
  }

  getAccount(uid: string): Promise<AccountRecord | null> {
    return this.get<AccountRecord>(K.account(uid));
  }

  async getAccountByName(accountName: string): Promise<AccountRecord | null> {
    const claim = await this.get<{ uid: string }>(K.accountName(accountName));
    if (!claim) return null;
    const account = await this.getAccount(claim.uid);
    // A claim without its account is the trace of an interrupted create or rename.
    return account && nameKey(account.accountName) === nameKey(accountName) ? account : null;
  }

  async replaceAccount(account: AccountRecord, expectedUpdatedAt: string): Promise<void> {
    try {
      await this.db.send(
        new PutCommand({
          TableName: this.tableName,
          Item: this.accountItem(account),
          ConditionExpression: 'attribute_exists(pk) AND updatedAt = :expected',
          ExpressionAttributeValues: { ':expected': expectedUpdatedAt },
        }),
      );
    } catch (e) {
      if (isConditionFailure(e)) throw new ConflictError('The account changed meanwhile; read it again and retry.');
      throw e;
    }
  }

  async renameAccount(account: AccountRecord, newName: string, updatedAt: string): Promise<AccountRecord> {
    const renamed = { ...account, accountName: newName, updatedAt };
    const sameKey = nameKey(newName) === nameKey(account.accountName);
    if (!sameKey) await this.putNew({ ...K.accountName(newName), uid: account.uid }, `An account named "${newName}" already exists.`);
    try {
      await this.replaceAccount(renamed, account.updatedAt);
    } catch (e) {
      if (!sameKey) await this.delete(K.accountName(newName));
      throw e;
    }
    if (!sameKey) await this.delete(K.accountName(account.accountName));
    else await this.put({ ...K.accountName(newName), uid: account.uid });
    return renamed;
  }

  async deleteAccount(account: AccountRecord): Promise<void> {
    await this.delete(K.account(account.uid));
    await this.delete(K.accountName(account.accountName));
  }

  listAccounts(request: ListRequest): Promise<Batch<AccountRecord>> {
    return this.queryBatch<AccountRecord>(
      {
        IndexName: 'gsi1',
        KeyConditionExpression: 'gsi1pk = :p',
        ExpressionAttributeValues: { ':p': 'ACCOUNTS' },
      },
      (i) => ({ pk: i.pk, sk: i.sk, gsi1pk: i.gsi1pk, gsi1sk: i.gsi1sk }),
      request,
    );
  }

  async countAdmins(): Promise<number> {
    const admins = await this.queryAll<AccountRecord>({
      IndexName: 'gsi2',
      KeyConditionExpression: 'gsi2pk = :p',
      ExpressionAttributeValues: { ':p': 'ADMINS' },
    });
    return admins.length;
  }

  async putMembership(m: MembershipRecord): Promise<void> {
    await this.put({ ...m, ...K.member(m.orgUid, m.userUid), gsi1pk: `MEMBEROF#${m.userUid}`, gsi1sk: m.orgUid });
  }

  getMembership(orgUid: string, userUid: string): Promise<MembershipRecord | null> {
    return this.get<MembershipRecord>(K.member(orgUid, userUid));
  }

  async deleteMembership(orgUid: string, userUid: string): Promise<void> {
    await this.delete(K.member(orgUid, userUid));
  }

  listMembers(orgUid: string): Promise<MembershipRecord[]> {
    return this.queryAll<MembershipRecord>({
      KeyConditionExpression: 'pk = :p AND begins_with(sk, :s)',
      ExpressionAttributeValues: { ':p': `ACC#${orgUid}`, ':s': 'MEMBER#' },
    });
  }

  listMembershipsOfUser(userUid: string): Promise<MembershipRecord[]> {
    return this.queryAll<MembershipRecord>({
      IndexName: 'gsi1',
      KeyConditionExpression: 'gsi1pk = :p',
      ExpressionAttributeValues: { ':p': `MEMBEROF#${userUid}` },
    });
  }

  async putToken(token: TokenRecord): Promise<void> {
    await this.putNew({ ...token, ...K.token(token.uid, token.tokenId) }, 'token id collision');
  }

  getToken(uid: string, tokenId: string): Promise<TokenRecord | null> {
    return this.get<TokenRecord>(K.token(uid, tokenId));
  }

  listTokens(uid: string): Promise<TokenRecord[]> {
    return this.queryAll<TokenRecord>({
      KeyConditionExpression: 'pk = :p AND begins_with(sk, :s)',
      ExpressionAttributeValues: { ':p': `ACC#${uid}`, ':s': 'TOKEN#' },
    });
  }

  deleteToken(uid: string, tokenId: string): Promise<boolean> {
    return this.delete(K.token(uid, tokenId));
  }

  async countLoginAttempt(key: string, now: string, windowStartsAfter: string, expiresAt: number): Promise<LoginAttempts> {
    // Either the current window grows by one, or a new window replaces a missing or ended one;
    // a racing writer makes one of the two conditions fail, and the loop tries the other.
    for (let round = 0; round < 5; round++) {
      try {
        const out = await this.db.send(
          new UpdateCommand({
            TableName: this.tableName,
            Key: K.loginAttempts(key),
            UpdateExpression: 'ADD attempts :one',
            ConditionExpression: 'attribute_exists(pk) AND windowStart > :after',
            ExpressionAttributeValues: { ':one': 1, ':after': windowStartsAfter },
            ReturnValues: 'ALL_NEW',
          }),
        );
        return { count: Number(out.Attributes?.attempts), windowStart: String(out.Attributes?.windowStart) };
      } catch (e) {
        if (!isConditionFailure(e)) throw e;
      }
      try {
        await this.db.send(
          new PutCommand({
            TableName: this.tableName,
            Item: { ...K.loginAttempts(key), attempts: 1, windowStart: now, expiresAt },
            ConditionExpression: 'attribute_not_exists(pk) OR windowStart <= :after',
            ExpressionAttributeValues: { ':after': windowStartsAfter },
          }),
        );
        return { count: 1, windowStart: now };
      } catch (e) {
        if (!isConditionFailure(e)) throw e;
      }
    }
    throw new ConflictError('Too many sign-in attempts at the same moment; try again.');
  }

  async releaseLoginAttempt(key: string, windowStartsAfter: string): Promise<void> {
    try {
      await this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: K.loginAttempts(key),
          UpdateExpression: 'ADD attempts :minusOne',
          ConditionExpression: 'attribute_exists(pk) AND windowStart > :after AND attempts > :zero',
          ExpressionAttributeValues: { ':minusOne': -1, ':after': windowStartsAfter, ':zero': 0 },
        }),
      );
    } catch (e) {
      if (!isConditionFailure(e)) throw e;
    }
  }

  async clearLoginAttempts(key: string): Promise<void> {
    await this.delete(K.loginAttempts(key));
  }

  async putSession(session: SessionRecord): Promise<void> {
    await this.putNew({ ...session, ...K.session(session.sessionHash) }, 'session id collision');
  }

  getSession(sessionHash: string): Promise<SessionRecord | null> {
    return this.get<SessionRecord>(K.session(sessionHash));
  }

  async deleteSession(sessionHash: string): Promise<void> {
    await this.delete(K.session(sessionHash));
  }
}
