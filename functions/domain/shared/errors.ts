/**
 * Typed domain errors. The domain knows nothing about HTTP; `functions/http/errors.ts` maps each
 * kind to a status code. Messages are shown to the caller, so they say what to fix and never
 * contain secrets.
 */
export abstract class DomainError extends Error {
  abstract readonly kind: DomainErrorKind;
}

export type DomainErrorKind =
  | 'validation'
  | 'unauthenticated'
  | 'forbidden'
  | 'not-found'
  | 'conflict'
  | 'too-large'
  | 'unsupported-media-type'
  | 'not-acceptable'
  | 'unprocessable'
  | 'unavailable'
  | 'too-many-requests';

export class ValidationError extends DomainError {
  readonly kind = 'validation';
  override name = 'ValidationError';
}
export class UnauthenticatedError extends DomainError {
  readonly kind = 'unauthenticated';
  override name = 'UnauthenticatedError';
  constructor(message = 'Unauthorized.') {
    super(message);
  }
}
export class ForbiddenError extends DomainError {
  readonly kind = 'forbidden';
  override name = 'ForbiddenError';
}
export class NotFoundError extends DomainError {
  readonly kind = 'not-found';
  override name = 'NotFoundError';
}
export class ConflictError extends DomainError {
  readonly kind = 'conflict';
  override name = 'ConflictError';
}
export class TooLargeError extends DomainError {
  readonly kind = 'too-large';
  override name = 'TooLargeError';
}
export class UnsupportedMediaTypeError extends DomainError {
  readonly kind = 'unsupported-media-type';
  override name = 'UnsupportedMediaTypeError';
}
export class NotAcceptableError extends DomainError {
  readonly kind = 'not-acceptable';
  override name = 'NotAcceptableError';
}
/** Well-formed and allowed, but it could not be carried out (a SPARQL LOAD whose source failed): 422. */
export class UnprocessableError extends DomainError {
  readonly kind = 'unprocessable';
  override name = 'UnprocessableError';
}
/** Exists but cannot answer now (a starting or stopped service, an overloaded engine): 503. */
export class ServiceUnavailableError extends DomainError {
  readonly kind = 'unavailable';
  override name = 'ServiceUnavailableError';
}
/** Too many attempts (sign-in guesses): 429, with when to try again. */
export class TooManyRequestsError extends DomainError {
  readonly kind = 'too-many-requests';
  override name = 'TooManyRequestsError';
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super(message);
  }
}
