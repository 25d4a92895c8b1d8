/**
 * The values a run may be given at start, checked against the flow's variables. Pure, so runs,
 * schedules and hooks (which store values to start with) check them the same way.
 */
import { ValidationError } from '../../shared/errors.js';
import type { FlowDefinition } from '../blueprints/model.js';

/** Checks the values given at start: known variables only, one text each, within allowed options. */
export function checkStartValues(definition: FlowDefinition, raw: Record<string, unknown>): Record<string, string> {
  const byName = new Map(definition.variables.map((v) => [v.name, v]));
  const values: Record<string, string> = {};
  for (const [name, value] of Object.entries(raw)) {
    const variable = byName.get(name);
    if (!variable) {
      const known = definition.variables.map((v) => `"${v.name}"`).join(', ');
      if (name.startsWith('system_')) throw new ValidationError(`"${name}" is a system variable; the platform sets it and a run cannot give it.`);
      if (definition.outputVariables.some((v) => v.name === name)) throw new ValidationError(`"${name}" is an output variable: a Set variables task sets it during the run, so it cannot be given at start.`);
      if (definition.maskedValues.some((v) => v.name === name)) throw new ValidationError(`"${name}" is a masked value: it is set on the flow, not given at start.`);
      throw new ValidationError(`The flow has no variable "${name}"${known ? `; its variables are ${known}` : ''}.`);
    }
    let text: string;
    if (typeof value === 'string') text = value;
    else if (typeof value === 'number' || typeof value === 'boolean') text = String(value);
    else throw new ValidationError(`Variable "${name}": give one text value (${Array.isArray(value) ? 'a list was given' : 'not an object'}).`);
    if (text !== '' && variable.allowedOptions.length > 0 && !variable.allowedOptions.includes(text)) {
      throw new ValidationError(`Variable "${name}": "${text}" is not one of its allowed options ${variable.allowedOptions.map((o) => `"${o}"`).join(', ')}.`);
    }
    values[name] = text;
  }
  return values;
}
