import { ValidationError } from './errors.js';

/** Name rules, shared by every route that takes a name. Messages say what to fix. */
const ACCOUNT_NAME = /^[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,38}[a-zA-Z0-9])?$/;
const DATASET_NAME = /^[a-zA-Z0-9-]{1,40}$/;
const ROLE_NAME = /^[a-z][a-z0-9-]{0,39}$/;
const PREFIX_LABEL = /^(?:[A-Za-z_][A-Za-z0-9_.-]{0,63})?$/;

/** Names that would shadow a route (`/me`) or confuse people. */
const RESERVED_ACCOUNT_NAMES = new Set(['me', 'info', 'login', 'logout', 'datasets', 'accounts', 'queries', 'flows']);

export function assertAccountName(value: unknown, field = 'accountName'): string {
  if (typeof value !== 'string' || !ACCOUNT_NAME.test(value)) {
    throw new ValidationError(
      `${field}: an account name can only contain letters, digits and hyphens, must start and end with a letter or digit, and has 1 to 40 characters.`,
    );
  }
  if (RESERVED_ACCOUNT_NAMES.has(value.toLowerCase())) {
    throw new ValidationError(`${field}: "${value}" is reserved; choose another account name.`);
  }
  return value;
}

export function assertDatasetName(value: unknown, field = 'name'): string {
  if (typeof value !== 'string' || !DATASET_NAME.test(value)) {
    throw new ValidationError(
      `${field}: A dataset name can only contain letters, digits and hyphens, and has 1 to 40 characters.`,
    );
  }
  return value;
}

export function assertRoleName(value: unknown, field = 'name'): string {
  if (typeof value !== 'string' || !ROLE_NAME.test(value)) {
    throw new ValidationError(
      `${field}: a role name starts with a lower-case letter, then lower-case letters, digits or hyphens (at most 40 characters).`,
    );
  }
  if (value === 'owner' || value === 'member') {
    throw new ValidationError(`${field}: "${value}" is a built-in role; choose another name.`);
  }
  return value;
}

export function assertPrefixLabel(value: unknown, field = 'prefixLabel'): string {
  if (typeof value !== 'string' || !PREFIX_LABEL.test(value)) {
    throw new ValidationError(
      `${field}: a prefix label starts with a letter or underscore, then letters, digits, "_", "." or "-" (at most 64 characters).`,
    );
  }
  return value;
}

export function assertAbsoluteIri(value: unknown, field: string): string {
  if (typeof value !== 'string' || value.length > 2048 || /[\s<>"{}|\\^`]/.test(value)) {
    throw new ValidationError(`${field}: must be an absolute IRI without spaces (at most 2048 characters).`);
  }
  try {
    const url = new URL(value);
    if (!url.protocol) throw new Error('no scheme');
  } catch {
    throw new ValidationError(`${field}: must be an absolute IRI such as https://example.org/ns#.`);
  }
  return value;
}

/** Lower-case key used for uniqueness: names are case-insensitive, their spelling is kept. */
export const nameKey = (name: string): string => name.toLowerCase();
