/** TokenCodec port: signed API tokens (JWT) and the digests tokens and sessions are stored under. */
export interface TokenCodec {
  /** Signs a JWT whose `iss` is the API URL, `sub` the account uid and `jti` the token id. */
  sign(claims: { iss: string; sub: string; jti: string }, secret: string): Promise<string>;
  /** The claims of a validly signed token, or null. */
  verify(token: string, secret: string): Promise<{ sub: string; jti: string } | null>;
  /** SHA-256, hex; used to store tokens and session ids without keeping them. */
  digest(value: string): string;
}
