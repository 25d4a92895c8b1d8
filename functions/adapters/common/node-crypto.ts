import { createHash, randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';
import { jwtVerify, SignJWT } from 'jose';
import type { Clock } from '../../ports/clock.js';
import type { Ids } from '../../ports/ids.js';
import type { PasswordHasher } from '../../ports/password-hasher.js';
import type { TokenCodec } from '../../ports/token-codec.js';

/** Adapters over Node's own crypto and clock; the same in both runtimes. */
export const systemClock: Clock = {
  now: () => new Date(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  after(ms, action) {
    const timer = setTimeout(action, ms);
    return () => clearTimeout(timer);
  },
};

export const randomIds: Ids = {
  newId: () => randomBytes(12).toString('hex'),
  randomToken: (bytes) => randomBytes(bytes).toString('base64url'),
};

const scryptAsync = promisify(scrypt) as (password: string, salt: Buffer, keylen: number, options: object) => Promise<Buffer>;

/** scrypt with N=2^15, r=8, p=1 (OWASP's minimum), stored as `scrypt$N$r$p$salt$hash`. */
export const scryptPasswordHasher: PasswordHasher = {
  async hash(password) {
    const salt = randomBytes(16);
    const N = 2 ** 15;
    const hash = await scryptAsync(password, salt, 32, { N, r: 8, p: 1, maxmem: 64 * 1024 * 1024 });
    return ['scrypt', N, 8, 1, salt.toString('base64'), hash.toString('base64')].join('$');
  },
  async verify(password, stored) {
    const [scheme, n, r, p, salt, hash] = stored.split('$');
    if (scheme !== 'scrypt' || !salt || !hash) return false;
    const expected = Buffer.from(hash, 'base64');
    const actual = await scryptAsync(password, Buffer.from(salt, 'base64'), expected.length, {
      N: Number(n),
      r: Number(r),
      p: Number(p),
      maxmem: 64 * 1024 * 1024,
    });
    return actual.length === expected.length && timingSafeEqual(actual, expected);
  },
};

const key = (secret: string) => Buffer.from(secret, 'base64url');

/**
 * Signatures already checked (issue 18: a request's token check cost 0.3 ms of HMAC through
 * WebCrypto). A signature check is a pure function of the token and the secret (no expiry), so a
 * verified pair stays verified; only successes are kept, under a digest of both (never the token
 * itself), at most VERIFIED_MAX, the least recently used going first. Revocation is unaffected:
 * it is the token record, which the caller reads on every request.
 */
const VERIFIED_MAX = 4096;
const verified = new Map<string, { sub: string; jti: string }>();
const verifiedKey = (token: string, secret: string) => createHash('sha256').update(secret).update('\n').update(token).digest('base64');

/** HS256 JWTs without expiry: a token lives until its server-side record is revoked. */
export const joseTokenCodec: TokenCodec = {
  async sign(claims, secret) {
    return new SignJWT({})
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setIssuer(claims.iss)
      .setSubject(claims.sub)
      .setJti(claims.jti)
      .setIssuedAt()
      .sign(key(secret));
  },
  async verify(token, secret) {
    const cacheKey = verifiedKey(token, secret);
    const known = verified.get(cacheKey);
    if (known) {
      verified.delete(cacheKey);
      verified.set(cacheKey, known);
      return { ...known };
    }
    try {
      const { payload } = await jwtVerify(token, key(secret), { algorithms: ['HS256'] });
      if (typeof payload.sub !== 'string' || typeof payload.jti !== 'string') return null;
      const claims = { sub: payload.sub, jti: payload.jti };
      verified.set(cacheKey, claims);
      if (verified.size > VERIFIED_MAX) verified.delete(verified.keys().next().value!);
      return { ...claims };
    } catch {
      return null;
    }
  },
  digest: (value) => createHash('sha256').update(value).digest('hex'),
};
