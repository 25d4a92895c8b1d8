/** Variable references, effective variables and decision conditions (the worker's pure rules). */
import { describe, expect, it } from 'vitest';
import { DecisionError, evaluateDecision, testCondition } from '../../../functions/domain/flows/tasks/decision.js';
import type { DecisionSettings } from '../../../functions/domain/flows/blueprints/model.js';
import {
  effectiveVariables,
  findVariableReferences,
  isSingleReference,
  substituteReferences,
} from '../../../functions/domain/flows/blueprints/variables.js';

describe('variable references', () => {
  it('finds ?name where the ? does not follow a word character or a backslash', () => {
    expect(findVariableReferences('Load ?source into ?dataset, again ?source')).toEqual(['source', 'dataset']);
    expect(findVariableReferences('https://x.example/data?format=csv&since=?since')).toEqual(['since']);
    expect(findVariableReferences('https://x.example/graphs/?graph')).toEqual(['graph']);
    expect(findVariableReferences('Really? Yes\\?no')).toEqual([]);
    expect(findVariableReferences('?system_triggererAccountName@acme.example')).toEqual(['system_triggererAccountName']);
    expect(findVariableReferences('é?x')).toEqual([]);
  });

  it('substitutes values, unset names as empty text, and \\? as ?', () => {
    expect(substituteReferences('?a and ?b; q\\?x=?a', { a: '1' })).toBe('1 and ; q?x=1');
    expect(substituteReferences('https://x.example/data?format=csv', {})).toBe('https://x.example/data?format=csv');
  });

  it('knows a single reference', () => {
    expect(isSingleReference(' ?delay ')).toBe(true);
    expect(isSingleReference('?a?b')).toBe(false);
    expect(isSingleReference('x ?a')).toBe(false);
  });

  it('effective variables: start values, then Set variables outputs in dependency order', () => {
    const tasks = {
      first: { status: 'finished', output: { variables: { stamp: '1', target: 't1' } } },
      second: { status: 'finished', output: { variables: { stamp: '2' } } },
      skipped: { status: 'skipped' },
    };
    expect(effectiveVariables({ env: 'prod' }, tasks, ['first', 'second', 'skipped', 'absent'])).toEqual({
      env: 'prod',
      stamp: '2',
      target: 't1',
    });
    expect(effectiveVariables({ env: 'prod' }, tasks, [])).toEqual({ env: 'prod' });
  });
});

describe('decision conditions', () => {
  const values = { env: 'production', count: '12', note: 'hello world', empty: '' };
  const holds = (operator: string, variable: string, value?: string) =>
    testCondition({ variable, operator: operator as never, ...(value !== undefined ? { value } : {}) }, values);

  it('compares text', () => {
    expect(holds('equals', 'env', 'production')).toBe(true);
    expect(holds('equals', 'env', 'Production')).toBe(false);
    expect(holds('notEquals', 'env', 'test')).toBe(true);
    expect(holds('contains', 'note', 'lo wo')).toBe(true);
    expect(holds('matches', 'note', '^hello\\s')).toBe(true);
    expect(holds('matches', 'note', '^world')).toBe(false);
    expect(holds('equals', 'env', '?env')).toBe(true); // values may reference variables
  });

  it('compares numbers held as text', () => {
    expect(holds('lt', 'count', '13')).toBe(true);
    expect(holds('le', 'count', '12')).toBe(true);
    expect(holds('gt', 'count', '12.5')).toBe(false);
    expect(holds('ge', 'count', '1e1')).toBe(true);
    expect(() => holds('gt', 'env', '1')).toThrow(DecisionError);
    expect(() => holds('gt', 'unset', '1')).toThrow('?unset is "", which is not a number.');
  });

  it('tests emptiness; an unset variable is empty', () => {
    expect(holds('empty', 'empty')).toBe(true);
    expect(holds('empty', 'unset')).toBe(true);
    expect(holds('notEmpty', 'env')).toBe(true);
    expect(holds('notEmpty', 'unset')).toBe(false);
  });

  it('takes the first branch that holds, else otherwise, else none', () => {
    const settings: DecisionSettings = {
      branches: [
        { to: 'big', conditions: [{ variable: 'count', operator: 'gt', value: '100' }] },
        { to: 'prod', match: 'any', conditions: [{ variable: 'env', operator: 'equals', value: 'production' }, { variable: 'count', operator: 'gt', value: 'x' }] },
      ],
      otherwise: 'rest',
    };
    // `any` stops at the first condition that holds (the second would throw).
    expect(evaluateDecision(settings, values)).toBe('prod');
    expect(evaluateDecision(settings, { ...values, count: '500' })).toBe('big');
    expect(evaluateDecision({ ...settings, branches: settings.branches.slice(0, 1) }, values)).toBe('rest');
    expect(evaluateDecision({ branches: settings.branches.slice(0, 1) }, values)).toBe('');
  });
});
