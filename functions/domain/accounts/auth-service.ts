import { timingSafeEqual } from 'node:crypto';
import type { AccountRecord, SessionRecord, TokenRecord } from './accounts.js';
import type { Caller } from '../shared/caller.js';
import { ForbiddenError, NotFoundError, TooManyRequestsError, UnauthenticatedError, ValidationError } from '../shared/errors.js';
import { nameKey } from '../shared/names.js';
import type { Platform } from '../shared/platform.js';

export const SESSION_COOKIE = 'ldp_session';
export const CSRF_COOKIE = 'ldp_csrf';
export const CSRF_HEADER = 'x-csrf-token';
export const SESSION_TTL_SECONDS = 7 * 24 * 3600;

/**
 * Sign-in throttling, counted in a window: per account name from one client address (and per
 * signed-in user re-entering a password), per client address across names, and per account name
 * from all addresses together. The last is ten times the first, so that nobody locks an account
 * out from one address: that takes many.
 */
export const LOGIN_WINDOW_SECONDS = 15 * 60;
export const MAX_LOGIN_ATTEMPTS_PER_ACCOUNT = 10;
/** Higher: several people may sign in from one address (an office behind one NAT). */
export const MAX_LOGIN_ATTEMPTS_PER_ADDRESS = 50;
export const MAX_LOGIN_ATTEMPTS_PER_ACCOUNT_ALL_ADDRESSES = 100;

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
const BEARER = /^Bearer\s+([\x21-\x7E]+)\s*$/i;

export interface Credentials {
  method: string;
  authorization?: string;
  cookies: Record<string, string>;
  csrfHeader?: string;
}

const sameString = (a: string, b: string): boolean => {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
};

/** Authentication: API tokens (JWT + revocable record) and console sessions (cookie + CSRF token). */
export class AuthService {
  private secret?: string;

  constructor(private readonly platform: Platform) {}

  /** The signing secret for issuing: created on first use, then kept for the life of the process. */
  private async issuingSecret(): Promise<string> {
    this.secret ??= await this.platform.store.ensureInstanceSecret(this.platform.ids.randomToken(32));
    return this.secret;
  }

  /**
   * The secret for verifying: read only, so read-only functions can authenticate. None yet means
   * no token was ever issued, so none can be valid.
   */
  private async verifyingSecret(): Promise<string | null> {
    this.secret ??= (await this.platform.store.getInstanceSecret()) ?? undefined;
    return this.secret ?? null;
  }

  /** The caller behind the request's credentials; null when it sent none. Bad credentials are a 401. */
  async authenticate(credentials: Credentials): Promise<Caller | null> {
    if (credentials.authorization !== undefined) return this.authenticateToken(credentials.authorization);
    const sessionId = credentials.cookies[SESSION_COOKIE];
    if (sessionId) return this.authenticateSession(sessionId, credentials);
    return null;
  }

  private async authenticateToken(header: string): Promise<Caller> {
    const invalid = () => new UnauthenticatedError('Unauthorized. The API token is invalid or has been revoked.');
    const token = BEARER.exec(header)?.[1];
    if (!token) throw new UnauthenticatedError('Unauthorized. Send the API token as "Authorization: Bearer <token>".');
    const secret = await this.verifyingSecret();
    const claims = secret ? await this.platform.tokens.verify(token, secret) : null;
    if (!claims) throw invalid();
    const record = await this.platform.store.getToken(claims.sub, claims.jti);
    if (!record || !sameString(record.tokenHash, this.platform.tokens.digest(token))) throw invalid();
    const account = await this.platform.store.getAccount(claims.sub);
    if (!account) throw invalid();
    return {
      uid: account.uid,
      accountName: account.accountName,
      isAdmin: account.isAdmin === true,
      credential: { kind: 'token', tokenId: record.tokenId, readOnly: record.readOnly },
    };
  }

  private async authenticateSession(sessionId: string, credentials: Credentials): Promise<Caller> {
    const expired = () => new UnauthenticatedError('Unauthorized. The console session has ended; sign in again.');
    const sessionHash = this.platform.tokens.digest(sessionId);
    const session = await this.platform.store.getSession(sessionHash);
    const nowSeconds = Math.floor(this.platform.clock.now().getTime() / 1000);
    if (!session || session.expiresAt <= nowSeconds) throw expired();
    if (!SAFE_METHODS.has(credentials.method.toUpperCase())) {
      const sent = credentials.csrfHeader ?? '';
      if (!sent || !sameString(sent, session.csrfToken)) {
        throw new ForbiddenError(
          `Forbidden. A console session must send the "${CSRF_HEADER}" header with the CSRF token from sign-in on every change.`,
        );
      }
    }
    const account = await this.platform.store.getAccount(session.uid);
    if (!account) throw expired();
    if ((session.generation ?? 0) !== (account.sessionGeneration ?? 0)) {
      throw new UnauthenticatedError('Unauthorized. The password changed since this console session began; sign in again.');
    }
    return {
      uid: account.uid,
      accountName: account.accountName,
      isAdmin: account.isAdmin === true,
      credential: { kind: 'session', sessionHash },
    };
  }

  /**
   * Counts this attempt for the account name and the client address before the password is
   * checked, so concurrent guesses are counted too; past the limit every attempt (even with the
   * right password, even for names that do not exist) is a 429 until the window ends.
   */
  private async throttleLogin(accountName: string, from: { clientAddress?: string } | 'confirmation') {
    const now = this.platform.clock.now();
    const windowStartsAfter = new Date(now.getTime() - LOGIN_WINDOW_SECONDS * 1000).toISOString();
    const expiresAt = Math.floor(now.getTime() / 1000) + LOGIN_WINDOW_SECONDS;
    const name = nameKey(accountName);
    const address = from === 'confirmation' ? undefined : from.clientAddress?.slice(0, 64);
    // The first counter is the one a success clears; the address counter gets its attempt back.
    const counters =
      from === 'confirmation'
        ? [{ key: `confirm:${name}`, max: MAX_LOGIN_ATTEMPTS_PER_ACCOUNT }]
        : address
          ? [
              { key: `account:${name}@${address}`, max: MAX_LOGIN_ATTEMPTS_PER_ACCOUNT },
              { key: `address:${address}`, max: MAX_LOGIN_ATTEMPTS_PER_ADDRESS },
              { key: `account:${name}`, max: MAX_LOGIN_ATTEMPTS_PER_ACCOUNT_ALL_ADDRESSES },
            ]
          : [{ key: `account:${name}`, max: MAX_LOGIN_ATTEMPTS_PER_ACCOUNT }];
    let retryAfterSeconds = 0;
    for (const { key, max } of counters) {
      const counted = await this.platform.store.countLoginAttempt(key, now.toISOString(), windowStartsAfter, expiresAt);
      if (counted.count > max) {
        const endsInMs = Date.parse(counted.windowStart) + LOGIN_WINDOW_SECONDS * 1000 - now.getTime();
        retryAfterSeconds = Math.max(retryAfterSeconds, Math.max(1, Math.ceil(endsInMs / 1000)));
      }
    }
    if (retryAfterSeconds > 0) {
      throw new TooManyRequestsError(`Too many sign-in attempts; try again in ${retryAfterSeconds} seconds.`, retryAfterSeconds);
    }
    return {
      /** A successful sign-in forgets the account's failures and gives the address its attempt back. */
      succeeded: async () => {
        await this.platform.store.clearLoginAttempts(counters[0]!.key);
        if (address) await this.platform.store.releaseLoginAttempt(`address:${address}`, windowStartsAfter);
      },
    };
  }

  /** Signs in with a password and opens a session. The same message for every failure. */
  async login(
    accountName: string,
    password: string,
    clientAddress?: string,
  ): Promise<{ account: AccountRecord; sessionId: string; csrfToken: string; expiresAt: number }> {
    const attempt = await this.throttleLogin(accountName, { clientAddress });
    const account = await this.platform.store.getAccountByName(accountName);
    const wrong = () => new UnauthenticatedError('Wrong account name or password.');
    if (!account || account.type !== 'user' || !account.passwordHash) {
      // Spend the same time as a real check so response times do not reveal which names exist.
      await this.platform.passwords.verify(password, DUMMY_HASH);
      throw wrong();
    }
    if (!(await this.platform.passwords.verify(password, account.passwordHash))) throw wrong();
    await attempt.succeeded();
    return { account, ...(await this.openSession(account)) };
  }

  /** A new console session of `account` (after a sign-in, or renewing the one that changed the password). */
  async openSession(account: AccountRecord): Promise<{ sessionId: string; csrfToken: string; expiresAt: number }> {
    const sessionId = this.platform.ids.randomToken(32);
    const csrfToken = this.platform.ids.randomToken(24);
    const now = this.platform.clock.now();
    const session: SessionRecord = {
      sessionHash: this.platform.tokens.digest(sessionId),
      uid: account.uid,
      csrfToken,
      generation: account.sessionGeneration ?? 0,
      createdAt: now.toISOString(),
      expiresAt: Math.floor(now.getTime() / 1000) + SESSION_TTL_SECONDS,
    };
    await this.platform.store.putSession(session);
    return { sessionId, csrfToken, expiresAt: session.expiresAt };
  }

  /**
   * Checks a signed-in user's password again (before a password change), counted like a sign-in,
   * so a stolen session cannot guess it without limit. False when it is wrong.
   */
  async confirmPassword(account: AccountRecord, password: string): Promise<boolean> {
    const attempt = await this.throttleLogin(account.accountName, 'confirmation');
    if (!account.passwordHash || !(await this.platform.passwords.verify(password, account.passwordHash))) return false;
    await attempt.succeeded();
    return true;
  }

  async logout(caller: Caller | null): Promise<void> {
    if (caller?.credential.kind !== 'session') {
      throw new ValidationError('Only a console session can sign out; API tokens are revoked with DELETE /accounts/{account}/tokens/{tokenId}.');
    }
    await this.platform.store.deleteSession(caller.credential.sessionHash);
  }

  /** Issues a token for `account`. The token string is returned once and stored only as a hash. */
  async issueToken(
    account: AccountRecord,
    input: { description: string; readOnly: boolean },
    apiUrl: string,
  ): Promise<{ record: TokenRecord; token: string }> {
    const minted = await this.mintToken(account, input, apiUrl);
    await this.platform.store.putToken(minted.record);
    return minted;
  }

  /**
   * A signed token and its record, not stored yet: the caller stores the record (with
   * `MetadataStore.putToken`) alongside its own writes. The token works only once stored.
   */
  async mintToken(
    account: AccountRecord,
    input: { description: string; readOnly: boolean },
    apiUrl: string,
  ): Promise<{ record: TokenRecord; token: string }> {
    const tokenId = this.platform.ids.newId();
    const token = await this.platform.tokens.sign({ iss: apiUrl, sub: account.uid, jti: tokenId }, await this.issuingSecret());
    const record: TokenRecord = {
      uid: account.uid,
      tokenId,
      description: input.description,
      readOnly: input.readOnly,
      tokenHash: this.platform.tokens.digest(token),
      createdAt: this.platform.clock.now().toISOString(),
    };
    return { record, token };
  }

  async revokeToken(account: AccountRecord, tokenId: string): Promise<void> {
    if (!(await this.platform.store.deleteToken(account.uid, tokenId))) {
      throw new NotFoundError(`Token "${tokenId}" does not exist.`);
    }
  }
}

/** A valid scrypt hash of a random password, used only to equalise login timing. */
const DUMMY_HASH =
  'scrypt$32768$8$1$c2FsdHNhbHRzYWx0c2FsdA==$2P0tdqKfFUS0f1dqy3wlnJ0OVt8N3fUE0uvYd3aaMSo=';
