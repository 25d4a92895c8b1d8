/** Ids port: unguessable identifiers and tokens (node:crypto behind it). */
export interface Ids {
  /** A random, URL-safe, unguessable identifier (24 hex characters). */
  newId(): string;
  /** `bytes` random bytes, base64url encoded. */
  randomToken(bytes: number): string;
}
