import { ValidationError } from '../../domain/errors.js';
import type { Operations } from '../api.js';

const notYet = async () => {
  throw new ValidationError('Hooks are not available yet.');
};

/** Hooks of a flow (placeholder until the hooks change lands). */
export const hookOperations: Operations = {
  listHooks: notYet,
  createHook: notYet,
  getHook: notYet,
  updateHook: notYet,
  deleteHook: notYet,
};
