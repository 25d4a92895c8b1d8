/**
 * Evaluating a Decision task. The compiled state machine routes on the task's output
 * (`{ "branch": "<task id>" }`, or `""` when no branch holds and there is no `otherwise`):
 * Choice states cannot test a regex or compare numbers held as text, and conditions may read
 * masked values that never enter the state machine, so the task worker evaluates with this.
 */
import type { DecisionCondition, DecisionSettings } from './model.js';
import { substituteReferences } from './variables.js';

/** A condition that cannot be evaluated (a non-number for a numeric comparison): the task fails. */
export class DecisionError extends Error {
  override name = 'DecisionError';
}

/** The id of the task the decision leads to, or `""` for none (every branch is skipped). */
export function evaluateDecision(settings: DecisionSettings, values: Readonly<Record<string, string>>): string {
  for (const branch of settings.branches) {
    const holds = (c: DecisionCondition) => testCondition(c, values);
    const taken = branch.match === 'any' ? branch.conditions.some(holds) : branch.conditions.every(holds);
    if (taken) return branch.to;
  }
  return settings.otherwise ?? '';
}

/** One condition. An unset variable reads as the empty text. */
export function testCondition(condition: DecisionCondition, values: Readonly<Record<string, string>>): boolean {
  const actual = values[condition.variable] ?? '';
  const raw = condition.value ?? '';
  const expected = condition.operator === 'matches' ? raw : substituteReferences(raw, values);
  switch (condition.operator) {
    case 'equals':
      return actual === expected;
    case 'notEquals':
      return actual !== expected;
    case 'contains':
      return actual.includes(expected);
    case 'matches':
      return new RegExp(expected, 'u').test(actual);
    case 'empty':
      return actual === '';
    case 'notEmpty':
      return actual !== '';
    case 'lt':
      return asNumber(actual, condition.variable) < asNumber(expected, 'the value');
    case 'le':
      return asNumber(actual, condition.variable) <= asNumber(expected, 'the value');
    case 'gt':
      return asNumber(actual, condition.variable) > asNumber(expected, 'the value');
    case 'ge':
      return asNumber(actual, condition.variable) >= asNumber(expected, 'the value');
  }
}

const NUMBER = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;

/** Decimal text as a number; anything else (including empty) is an error naming the source. */
export function asNumber(text: string, what: string): number {
  const trimmed = text.trim();
  if (!NUMBER.test(trimmed)) {
    throw new DecisionError(`${what === 'the value' ? 'The value' : `?${what}`} is "${text}", which is not a number.`);
  }
  return Number(trimmed);
}

export function isNumberText(text: string): boolean {
  return NUMBER.test(text.trim());
}
