/**
 * Evaluating a Decision task. The compiled state machine routes on the task's output
 * (`{ "branch": "<task id>" }`, or `""` when no branch holds and there is no `otherwise`):
 * Choice states cannot test a regex or compare numbers held as text, and conditions may read
 * masked values that never enter the state machine, so the task worker evaluates with this.
 */
import { RE2JS } from 're2js';
import type { DecisionCondition, DecisionSettings } from '../blueprints/model.js';
import { substituteReferences } from '../blueprints/variables.js';

/**
 * How much matching one decision may do, counted as the pattern's program size times the length
 * of the text it is tested on (re2js runs in time linear in both). The work runs on the event
 * loop, so it is capped: about a quarter of a second at worst, measured at ~70 million steps per
 * second on the slowest (NFA) path.
 */
export const MATCH_WORK_BUDGET = 20_000_000;

/** A condition that cannot be evaluated (a non-number for a numeric comparison): the task fails. */
export class DecisionError extends Error {
  override name = 'DecisionError';
}

/** The id of the task the decision leads to, or `""` for none (every branch is skipped). */
export function evaluateDecision(settings: DecisionSettings, values: Readonly<Record<string, string>>): string {
  const budget = new MatchBudget();
  for (const branch of settings.branches) {
    const holds = (c: DecisionCondition) => testCondition(c, values, budget);
    const taken = branch.match === 'any' ? branch.conditions.some(holds) : branch.conditions.every(holds);
    if (taken) return branch.to;
  }
  return settings.otherwise ?? '';
}

/** One condition. An unset variable reads as the empty text. */
export function testCondition(condition: DecisionCondition, values: Readonly<Record<string, string>>, budget = new MatchBudget()): boolean {
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
      return budget.test(compileForRun(expected, condition.variable), actual, condition.variable);
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

/** The matching work left to one decision evaluation. */
export class MatchBudget {
  private left = MATCH_WORK_BUDGET;

  test(pattern: RE2JS, text: string, variable: string): boolean {
    const work = pattern.programSize() * (text.length + 1);
    if (work > this.left) {
      throw new DecisionError(
        `Matching ?${variable} (${text.length.toLocaleString('en-US')} characters) against the pattern "${pattern.pattern()}" is more work than a decision may do; use a simpler pattern or test a shorter text.`,
      );
    }
    this.left -= work;
    return pattern.test(text);
  }
}

/**
 * Why `pattern` is not a regular expression in RE2 syntax (linear-time matching: no
 * backreferences, no lookaround), or undefined when it is one.
 */
export function regexProblem(pattern: string): string | undefined {
  try {
    RE2JS.compile(pattern);
    return undefined;
  } catch (e) {
    return `${(e as Error).message.replace(/^error parsing regexp: /, '')} (RE2 syntax: no backreferences or lookaround)`;
  }
}

/** A pattern saved before RE2 syntax was checked may not compile: the task fails, saying why. */
function compileForRun(pattern: string, variable: string): RE2JS {
  try {
    return RE2JS.compile(pattern);
  } catch (e) {
    throw new DecisionError(
      `The pattern "${pattern}" tested on ?${variable} is not a regular expression in RE2 syntax: ${(e as Error).message.replace(/^error parsing regexp: /, '')}. Change it in the flow (RE2 has no backreferences or lookaround).`,
    );
  }
}

const NUMBER = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;

/** Decimal text as a number; anything else (including empty) is an error naming the source. */
export function asNumber(text: string, what: string): number {
  const trimmed = text.trim();
  if (!NUMBER.test(trimmed)) {
    const shown = text.length > 100 ? `${text.slice(0, 100)}…` : text;
    throw new DecisionError(`${what === 'the value' ? 'The value' : `?${what}`} is "${shown}", which is not a number.`);
  }
  return Number(trimmed);
}

export function isNumberText(text: string): boolean {
  return NUMBER.test(text.trim());
}
