/**
 * The Decision task: its settings check and its evaluation. The compiled state machine routes on
 * the task's output (`{ "branch": "<task id>" }`, or `""` when no branch holds and there is no
 * `otherwise`): Choice states cannot test a regex or compare numbers held as text, and conditions
 * may read masked values that never enter the state machine, so the task worker evaluates here.
 */
import { RE2JS } from 're2js';
import { charLength, FLOW_LIMITS } from '../limits.js';
import {
  CONDITION_OPERATORS,
  NUMERIC_OPERATORS,
  VALUELESS_OPERATORS,
  type ConditionOperator,
  type DecisionCondition,
  type DecisionSettings,
} from '../blueprints/model.js';
import { isSingleReference, substituteReferences } from '../blueprints/variables.js';
import type { CheckContext, SettingsReader } from './settings-reader.js';
import type { TaskTypeDefinition } from './task-type.js';

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

// ---- The task type ----

export const decision: TaskTypeDefinition = {
  type: 'decision',
  title: 'Decision',
  kind: 'control',
  check(s, ctx) {
    const targets = new Set<string>();
    const target = (reader: SettingsReader, key: string, required: boolean) => {
      const to = reader.text(key, { required, what: 'the id of a connected task', references: false });
      if (to === undefined || to === '') return;
      targets.add(to);
      if (!ctx.successors.includes(to)) {
        ctx.problem(
          reader.at(key),
          'decision-branch',
          ctx.taskIds.has(to)
            ? `Task "${to}" is not connected from this decision; connect it or choose a connected task.`
            : `There is no task "${to}".`,
        );
      }
    };
    const branches = s.objects('branches', { required: true, what: 'a branch ({ "to", "conditions" })' });
    if (branches && branches.length === 0) ctx.problem(s.at('branches'), 'invalid', 'Give at least one branch.');
    for (const b of branches ?? []) {
      target(b, 'to', true);
      b.choice('match', ['all', 'any'] as const);
      const conditions = b.objects('conditions', { required: true, what: 'a condition ({ "variable", "operator", "value" })' });
      if (conditions && conditions.length === 0) ctx.problem(b.at('conditions'), 'invalid', 'Give at least one condition.');
      for (const c of conditions ?? []) condition(c, ctx);
      b.finish();
    }
    if (s.has('otherwise')) target(s, 'otherwise', false);
    for (const next of ctx.successors) {
      if (!targets.has(next)) {
        ctx.problem(
          s.at('branches'),
          'decision-branch',
          `This decision is connected to "${next}" but no branch leads there; add a branch (or "otherwise") or remove the connection.`,
        );
      }
    }
    s.finish();
  },
  async run(ctx) {
    const branch = evaluateDecision(ctx.settings as unknown as DecisionSettings, ctx.values);
    ctx.log(branch ? `Chose "${branch}".` : 'No branch holds: every task after this decision is skipped.');
    return { branch };
  },
};

/** One condition of a branch: a defined variable, an operator, and a value that suits it. */
function condition(c: SettingsReader, ctx: CheckContext): void {
  const variable = c.text('variable', { required: true, what: 'a variable name', references: false });
  if (variable) {
    const name = variable.startsWith('?') ? variable.slice(1) : variable;
    if (name !== variable) {
      ctx.problem(c.at('variable'), 'invalid', `Write the variable name without "?": "${name}".`);
    }
    if (!ctx.isDefinedVariable(name)) {
      ctx.problem(c.at('variable'), 'undefined-variable', `No variable, output variable, masked value or system variable is called "${name}".`);
    }
  }
  const operator = c.choice('operator', CONDITION_OPERATORS, { required: true });
  const valueless = operator !== undefined && VALUELESS_OPERATORS.includes(operator);
  if (valueless) {
    if (c.has('value')) {
      c.text('value', { references: false });
      ctx.problem(c.at('value'), 'invalid', `"${operator}" takes no value; remove it.`);
    }
  } else {
    const value = c.text('value', { required: operator !== undefined, what: 'the value to compare with', references: operator !== 'matches' });
    if (value !== undefined && operator) checkConditionValue(operator, value, c.at('value'), ctx);
  }
  c.finish();
}

function checkConditionValue(operator: ConditionOperator, value: string, path: string, ctx: CheckContext): void {
  if (NUMERIC_OPERATORS.includes(operator) && !isNumberText(value) && !isSingleReference(value)) {
    ctx.problem(path, 'invalid', `"${operator}" compares numbers; "${value}" is not a number.`);
  }
  if (operator === 'matches') {
    const where = `${ctx.taskId ? `Decision "${ctx.taskId}"` : 'This decision'}, ${describeCondition(path)}`;
    if (charLength(value) > FLOW_LIMITS.decisionPattern) {
      ctx.problem(path, 'too-long', `${where}: a pattern has at most ${FLOW_LIMITS.decisionPattern.toLocaleString('en-US')} characters; this has ${charLength(value).toLocaleString('en-US')}.`);
      return;
    }
    const problem = regexProblem(value);
    if (problem) ctx.problem(path, 'invalid', `${where}: not a regular expression in RE2 syntax: ${problem}.`);
  }
}

/** `branch 1, condition 2` from a path ending in `branches[0].conditions[1].value`. */
function describeCondition(path: string): string {
  const m = /branches\[(\d+)\]\.conditions\[(\d+)\]/.exec(path);
  return m ? `branch ${Number(m[1]) + 1}, condition ${Number(m[2]) + 1}` : 'a condition';
}
