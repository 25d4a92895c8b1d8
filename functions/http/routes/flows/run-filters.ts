/** The run listing's query string (GET /flows/runs) read into the domain's RunFilters. */
import type { RunFilters } from '../../../domain/flows/runs/listing.js';
import { RUN_STATUS_SEVERITY, type RunStatus } from '../../../domain/flows/runs/run-status.js';
import { FLOW_LIMITS } from '../../../domain/flows/limits.js';
import { STARTED_FROM_TYPES, type StartedFromType } from '../../../domain/flows/records.js';
import { ValidationError } from '../../../domain/shared/errors.js';

export const DEFAULT_RUNS_LIMIT = 100;

/** The query parameters of the run listing (any other is refused). */
export const RUN_FILTER_PARAMS = ['blueprintId', 'account', 'status', 'startedFromType', 'startedBy', 'scheduleId', 'hookId', 'assetId', 'createdAtFrom', 'createdAtTo', 'sortBy', 'sortDirection', 'after', 'limit'] as const;

/** Parses the run listing's query parameters. */
export function parseRunFilters(query: URLSearchParams): RunFilters {
  const one = (name: string): string | undefined => {
    const all = query.getAll(name);
    if (all.length > 1) throw new ValidationError(`${name}: give it once.`);
    return all[0] === '' ? undefined : all[0];
  };
  const filters: RunFilters = { sortBy: 'createdAt', sortDirection: 'desc', limit: DEFAULT_RUNS_LIMIT };
  const blueprintId = one('blueprintId');
  if (blueprintId) filters.blueprintId = blueprintId;
  const account = one('account');
  if (account) filters.account = account;
  const status = one('status');
  if (status) {
    const statuses = status.split(',').map((s) => s.trim());
    for (const s of statuses) {
      if (!(RUN_STATUS_SEVERITY as readonly string[]).includes(s)) throw new ValidationError(`status: "${s}" is not a run status; use ${RUN_STATUS_SEVERITY.join(', ')} (several separated by commas).`);
    }
    filters.status = statuses as RunStatus[];
  }
  const type = one('startedFromType');
  if (type) {
    if (!(STARTED_FROM_TYPES as readonly string[]).includes(type)) throw new ValidationError(`startedFromType: use one of ${STARTED_FROM_TYPES.join(', ')}.`);
    filters.startedFromType = type as StartedFromType;
  }
  for (const name of ['startedBy', 'scheduleId', 'hookId', 'assetId'] as const) {
    const v = one(name);
    if (v) filters[name] = v;
  }
  for (const name of ['createdAtFrom', 'createdAtTo'] as const) {
    const v = one(name);
    if (v) {
      const t = Date.parse(v);
      if (Number.isNaN(t)) throw new ValidationError(`${name}: give a date or date-time such as 2026-11-22 or 2026-11-22T10:00:00Z.`);
      filters[name] = new Date(t).toISOString();
    }
  }
  const sortBy = one('sortBy');
  if (sortBy) {
    if (sortBy !== 'createdAt' && sortBy !== 'finishedAt') throw new ValidationError('sortBy: use createdAt or finishedAt.');
    filters.sortBy = sortBy;
  }
  const direction = one('sortDirection');
  if (direction) {
    const d = direction.toLowerCase();
    if (d !== 'asc' && d !== 'desc') throw new ValidationError('sortDirection: use asc or desc.');
    filters.sortDirection = d;
  }
  const after = one('after');
  if (after) filters.after = after;
  const limit = one('limit');
  if (limit !== undefined) {
    const n = Number(limit);
    if (!Number.isInteger(n) || n < 1 || n > FLOW_LIMITS.runsListing) throw new ValidationError(`limit: a whole number from 1 to ${FLOW_LIMITS.runsListing}.`);
    filters.limit = n;
  }
  return filters;
}
