/** Small ports the domain needs besides storage. */
export interface Clock {
  now(): Date;
}

export interface Ids {
  /** A random, URL-safe, unguessable identifier (24 hex characters). */
  newId(): string;
  /** `bytes` random bytes, base64url encoded. */
  randomToken(bytes: number): string;
}

export interface PasswordHasher {
  hash(password: string): Promise<string>;
  verify(password: string, stored: string): Promise<boolean>;
}

export interface TokenCodec {
  /** Signs a JWT whose `iss` is the API URL, `sub` the account uid and `jti` the token id. */
  sign(claims: { iss: string; sub: string; jti: string }, secret: string): Promise<string>;
  /** The claims of a validly signed token, or null. */
  verify(token: string, secret: string): Promise<{ sub: string; jti: string } | null>;
  /** SHA-256, hex; used to store tokens and session ids without keeping them. */
  digest(value: string): string;
}
