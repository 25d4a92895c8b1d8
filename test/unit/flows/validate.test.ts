/** Flow validation on save: every problem named, with a code and a path, all at once. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { FLOW_LIMITS } from '../../../functions/domain/flows/limits.js';
import { FlowValidationError, type FlowProblem, type FlowProblemCode } from '../../../functions/domain/flows/blueprints/problems.js';
import { parseFlow, validateFlow } from '../../../functions/domain/flows/blueprints/validate.js';
import { fixtureNames, loadFixture } from './helpers.js';

type Json = Record<string, any>;

/** A small valid flow; each test breaks one thing. */
function base(): Json {
  return {
    id: 'base',
    name: 'Base flow',
    accessLevel: 'Private',
    variables: [{ name: 'source', required: true }],
    outputVariables: [{ name: 'stamp' }],
    maskedValues: [{ name: 'token' }],
    tasks: [
      { id: 'load', label: 'Load', type: 'loadFromUrl', settings: { url: '?source', dataset: { account: 'a', dataset: 'd' } } },
      { id: 'mark', label: 'Mark', type: 'setVariables', settings: { values: { stamp: 'loaded by ?system_triggererAccountName' } } },
      { id: 'say', label: 'Describe', type: 'setDescription', settings: { description: 'Loaded ?source at ?stamp' } },
    ],
    connections: [
      { from: 'load', to: 'mark' },
      { from: 'mark', to: 'say' },
    ],
  };
}

function problemsOf(flow: unknown): FlowProblem[] {
  const result = validateFlow(flow);
  return result.ok ? [] : result.problems;
}

/** Exactly one problem, with this code at this path. */
function expectOnly(flow: unknown, code: FlowProblemCode, path: string): FlowProblem {
  const problems = problemsOf(flow);
  expect(problems.map((p) => [p.code, p.path])).toEqual([[code, path]]);
  return problems[0]!;
}

const repeat = (n: number) => 'x'.repeat(n);
const email = (i: number): Json => ({ id: `mail${i}`, label: `Mail ${i}`, type: 'sendEmail', settings: { to: ['a@b.example'], subject: 's', body: 'b' } });

describe('valid flows', () => {
  it.each(fixtureNames())('fixture %s is valid', (name) => {
    expect(problemsOf(loadFixture(name))).toEqual([]);
  });

  it('the base flow is valid and normalized with defaults', () => {
    const result = validateFlow(base());
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.flow.formatVersion).toBe(1);
    expect(result.flow.description).toBe('');
    expect(result.flow.variables[0]).toEqual({ name: 'source', description: '', required: true, allowedOptions: [] });
    expect(result.flow.presets).toEqual([]);
  });

  it('limits are inclusive: 80-character name, 40-character label, 80-character preset name', () => {
    const flow = base();
    flow.name = repeat(FLOW_LIMITS.flowName);
    flow.tasks[0].label = '🙂'.repeat(FLOW_LIMITS.taskLabel); // counted in characters, not UTF-16 units
    flow.presets = [{ name: repeat(FLOW_LIMITS.presetName), values: { source: 'https://x.example/' } }];
    expect(problemsOf(flow)).toEqual([]);
  });

  it('a ? inside a URL query string is no reference, and \\? is a literal question mark', () => {
    const flow = base();
    flow.tasks[0].settings.url = 'https://data.example/export?format=ttl&since=?source';
    flow.tasks[2].settings.description = 'Is it done\\?yes';
    expect(problemsOf(flow)).toEqual([]);
  });
});

describe('each problem is named', () => {
  it('not an object', () => {
    expect(problemsOf([])).toEqual([{ code: 'invalid', path: '', message: 'A flow definition is a JSON object, not a list.' }]);
  });

  it('unknown task type', () => {
    const flow = base();
    flow.tasks[1].type = 'runEtl';
    const p = expectOnly(flow, 'unknown-task-type', 'tasks[1].type');
    expect(p.message).toContain('"runEtl"');
    expect(p.message).toContain('sparqlQuery');
  });

  it('dangling connection', () => {
    const flow = base();
    flow.connections.push({ from: 'say', to: 'ghost' });
    expect(expectOnly(flow, 'dangling-connection', 'connections[2].to').message).toContain('"ghost"');
  });

  it('a cycle, named by its tasks', () => {
    const flow = base();
    flow.connections.push({ from: 'say', to: 'load' });
    expect(expectOnly(flow, 'cycle', 'connections').message).toBe(
      'Tasks "load" → "mark" → "say" → "load" form a cycle; remove one of these connections.',
    );
  });

  it('a task connected to itself', () => {
    const flow = base();
    flow.connections.push({ from: 'say', to: 'say' });
    expect(expectOnly(flow, 'cycle', 'connections').message).toContain('"say" is connected to itself');
  });

  it('duplicate task ids and duplicate connections', () => {
    const flow = base();
    flow.tasks[2].id = 'mark';
    flow.connections = [{ from: 'load', to: 'mark' }, { from: 'load', to: 'mark' }];
    expect(problemsOf(flow).map((p) => [p.code, p.path])).toEqual([
      ['duplicate', 'tasks[2].id'],
      ['duplicate', 'connections[1]'],
    ]);
  });

  it('a reference no variable defines', () => {
    const flow = base();
    flow.tasks[0].settings.dataset.dataset = '?target';
    expect(expectOnly(flow, 'undefined-variable', 'tasks[0].settings.dataset.dataset').message).toContain('?target is not defined');
  });

  it('an unknown system variable', () => {
    const flow = base();
    flow.tasks[2].settings.description = 'By ?system_whoever';
    expect(expectOnly(flow, 'undefined-variable', 'tasks[2].settings.description').message).toContain('not a system variable');
  });

  it('masked values and output variables count as defined; SPARQL text is not scanned', () => {
    const flow = base();
    flow.tasks[0].settings.headers = { Authorization: 'Bearer ?token' };
    flow.tasks.push({
      id: 'q',
      label: 'Query',
      type: 'sparqlQuery',
      settings: {
        dataset: { account: 'a', dataset: 'd' },
        query: { text: 'SELECT ?anything WHERE { ?anything ?p ?o }' },
        output: { to: 'artifact', format: 'csv' },
      },
    });
    expect(problemsOf(flow)).toEqual([]);
  });

  it('a reserved system_ name', () => {
    const flow = base();
    flow.variables.push({ name: 'system_mine' });
    expect(expectOnly(flow, 'reserved-name', 'variables[1].name').message).toContain('reserved');
  });

  it('an output variable sharing a flow variable name', () => {
    const flow = base();
    flow.outputVariables.push({ name: 'source' });
    expectOnly(flow, 'output-variable-clash', 'outputVariables[1].name');
  });

  it('a masked value sharing a variable name', () => {
    const flow = base();
    flow.maskedValues.push({ name: 'stamp' });
    expectOnly(flow, 'name-clash', 'maskedValues[1].name');
  });

  it('Set variables may only set declared output variables', () => {
    const flow = base();
    flow.tasks[1].settings.values = { source: 'x', other: 'y' };
    expect(problemsOf(flow).map((p) => [p.code, p.path])).toEqual([
      ['unknown-output-variable', 'tasks[1].settings.values.source'],
      ['unknown-output-variable', 'tasks[1].settings.values.other'],
    ]);
  });

  it('Public access level is refused', () => {
    const flow = base();
    flow.accessLevel = 'Public';
    expect(expectOnly(flow, 'access-level', 'accessLevel').message).toBe('A flow cannot be Public; choose Private or Internal.');
  });

  it('flow name over 80 characters', () => {
    const flow = base();
    flow.name = repeat(81);
    expect(expectOnly(flow, 'too-long', 'name').message).toBe('At most 80 characters; this has 81.');
  });

  it('task label over 40 characters', () => {
    const flow = base();
    flow.tasks[0].label = repeat(41);
    expectOnly(flow, 'too-long', 'tasks[0].label');
  });

  it('preset name over 80 characters', () => {
    const flow = base();
    flow.presets = [{ name: repeat(81), values: {} }];
    expectOnly(flow, 'too-long', 'presets[0].name');
  });

  it('inline SPARQL over 10,000 characters', () => {
    const flow = base();
    const query = `SELECT * WHERE { ?s ?p ?o } #${repeat(FLOW_LIMITS.inlineSparql)}`;
    flow.tasks.push({
      id: 'q',
      label: 'Query',
      type: 'sparqlQuery',
      settings: { dataset: { account: 'a', dataset: 'd' }, query: { text: query }, output: { to: 'artifact', format: 'json' } },
    });
    expect(expectOnly(flow, 'too-long', 'tasks[3].settings.query.text').message).toContain('At most 10,000 characters');
  });

  it('inline SPARQL update over 10,000 characters', () => {
    const flow = base();
    flow.tasks.push({
      id: 'u',
      label: 'Update',
      type: 'sparqlUpdate',
      settings: { dataset: { account: 'a', dataset: 'd' }, update: { text: `CLEAR DEFAULT #${repeat(FLOW_LIMITS.inlineSparql)}` } },
    });
    expectOnly(flow, 'too-long', 'tasks[3].settings.update.text');
  });

  it('more than 5 Send email tasks', () => {
    const flow = base();
    flow.tasks.push(...[1, 2, 3, 4, 5].map(email));
    expect(problemsOf(flow)).toEqual([]);
    flow.tasks.push(email(6));
    expect(expectOnly(flow, 'too-many', 'tasks').message).toBe('At most 5 Send email tasks per flow; this flow has 6.');
  });

  it('more than 10 recipients counted across to, cc and bcc', () => {
    const flow = base();
    const mail = email(1);
    const addresses = (n: number, tag: string) => Array.from({ length: n }, (_, i) => `${tag}${i}@x.example`);
    mail.settings = { ...mail.settings, to: addresses(4, 'to'), cc: addresses(3, 'cc'), bcc: addresses(3, 'bcc') };
    flow.tasks.push(mail);
    expect(problemsOf(flow)).toEqual([]);
    mail.settings.bcc = addresses(4, 'bcc');
    expect(expectOnly(flow, 'too-many', 'tasks[3].settings').message).toBe(
      'At most 10 recipients, counted across to, cc and bcc; this task has 11.',
    );
  });

  it('email body over 10,000 characters', () => {
    const flow = base();
    const mail = email(1);
    mail.settings.body = repeat(FLOW_LIMITS.emailBody + 1);
    flow.tasks.push(mail);
    expectOnly(flow, 'too-long', 'tasks[3].settings.body');
  });

  it('run description over 1,000 characters', () => {
    const flow = base();
    flow.tasks[2].settings.description = repeat(FLOW_LIMITS.runDescription + 1);
    expect(expectOnly(flow, 'too-long', 'tasks[2].settings.description').message).toBe('At most 1,000 characters; this has 1,001.');
  });

  it('an unknown setting and a setting name ending in .$', () => {
    const flow = base();
    flow.tasks[0].settings.retries = 3;
    flow.tasks[0].settings.headers = { 'X-Trace.$': '$.run' };
    expect(problemsOf(flow).map((p) => [p.code, p.path])).toEqual([
      ['invalid', 'tasks[0].settings.headers["X-Trace.$"]'],
      ['unknown-setting', 'tasks[0].settings.retries'],
    ]);
  });

  it('the deployment placeholder ${TaskWorkerArn} in a setting text', () => {
    const flow = base();
    flow.tasks[2].settings.description = 'Resource is ${TaskWorkerArn}';
    expectOnly(flow, 'invalid', 'tasks[2].settings.description');
  });

  it('a Timeout that is not a positive whole number', () => {
    const flow = base();
    flow.tasks[0].timeoutSeconds = 0;
    flow.tasks[1].timeoutSeconds = 1.5;
    expect(problemsOf(flow).map((p) => [p.code, p.path])).toEqual([
      ['invalid', 'tasks[0].timeoutSeconds'],
      ['invalid', 'tasks[1].timeoutSeconds'],
    ]);
  });

  it('SPARQL that does not parse, and a query form that does not suit the output', () => {
    const flow = base();
    const q = (id: string, text: string, output: Json) => ({
      id,
      label: id,
      type: 'sparqlQuery',
      settings: { dataset: { account: 'a', dataset: 'd' }, query: { text }, output },
    });
    flow.tasks.push(
      q('broken', 'SELECT WHERE {', { to: 'artifact', format: 'csv' }),
      q('selectToGraph', 'SELECT * WHERE { ?s ?p ?o }', { to: 'graph', dataset: { account: 'a', dataset: 'd' }, graph: 'https://g.example/' }),
      q('constructToFile', 'CONSTRUCT WHERE { ?s ?p ?o }', { to: 'artifact', format: 'json' }),
      q('update', 'CLEAR ALL', { to: 'artifact', format: 'json' }),
    );
    expect(problemsOf(flow).map((p) => [p.code, p.path])).toEqual([
      ['invalid-sparql', 'tasks[3].settings.query.text'],
      ['query-form', 'tasks[4].settings.output'],
      ['query-form', 'tasks[5].settings.output'],
      ['query-form', 'tasks[6].settings.query.text'],
    ]);
  });

  it('decision branches must follow connections, and every connection needs a branch', () => {
    const flow = base();
    flow.tasks.push(
      {
        id: 'choose',
        label: 'Choose',
        type: 'decision',
        settings: { branches: [{ to: 'say', conditions: [{ variable: 'source', operator: 'notEmpty' }] }] },
      },
      { id: 'a', label: 'A', type: 'setDescription', settings: { description: 'a' } },
    );
    flow.connections.push({ from: 'choose', to: 'a' });
    const problems = problemsOf(flow);
    expect(problems.map((p) => [p.code, p.path])).toEqual([
      ['decision-branch', 'tasks[3].settings.branches[0].to'],
      ['decision-branch', 'tasks[3].settings.branches'],
    ]);
    expect(problems[0]!.message).toContain('not connected from this decision');
    expect(problems[1]!.message).toContain('connected to "a" but no branch leads there');
  });

  it('decision conditions: unknown variable, bad operator, missing value, bad regex, non-number', () => {
    const flow = base();
    flow.tasks.push(
      {
        id: 'choose',
        label: 'Choose',
        type: 'decision',
        settings: {
          branches: [
            {
              to: 'a',
              conditions: [
                { variable: 'nope', operator: 'equals', value: 'x' },
                { variable: 'source', operator: 'startsWith', value: 'x' },
                { variable: 'source', operator: 'equals' },
                { variable: 'source', operator: 'matches', value: '(' },
                { variable: 'source', operator: 'gt', value: 'ten' },
                { variable: 'source', operator: 'empty', value: 'x' },
              ],
            },
          ],
        },
      },
      { id: 'a', label: 'A', type: 'setDescription', settings: { description: 'a' } },
    );
    flow.connections.push({ from: 'choose', to: 'a' });
    const at = 'tasks[3].settings.branches[0].conditions';
    expect(problemsOf(flow).map((p) => [p.code, p.path])).toEqual([
      ['undefined-variable', `${at}[0].variable`],
      ['invalid', `${at}[1].operator`],
      ['invalid', `${at}[2].value`],
      ['invalid', `${at}[3].value`],
      ['invalid', `${at}[4].value`],
      ['invalid', `${at}[5].value`],
    ]);
  });

  it('Stop run cannot have tasks after it', () => {
    const flow = base();
    flow.tasks[1] = { id: 'mark', label: 'Stop', type: 'stopRun', settings: {} };
    flow.tasks[2].settings.description = 'Loaded ?source';
    expect(expectOnly(flow, 'stop-run-successor', 'tasks[1]').message).toContain('(say)');
  });

  it('presets: no variables, two defaults, unknown variables, options not allowed', () => {
    const noVariables = base();
    noVariables.variables = [];
    noVariables.tasks[0].settings.url = 'https://x.example/';
    noVariables.tasks[2].settings.description = 'done';
    noVariables.presets = [{ name: 'P', values: {} }];
    expectOnly(noVariables, 'preset-without-variables', 'presets');

    const flow = base();
    flow.variables[0].allowedOptions = ['https://a.example/', 'https://b.example/'];
    flow.presets = [
      { name: 'A', values: { source: 'https://a.example/' }, default: true },
      { name: 'B', values: { source: 'https://c.example/', stamp: 'x', token: 'y', nope: 'z' }, default: true },
    ];
    expect(problemsOf(flow).map((p) => [p.code, p.path])).toEqual([
      ['option-not-allowed', 'presets[1].values.source'],
      ['unknown-preset-variable', 'presets[1].values.stamp'],
      ['unknown-preset-variable', 'presets[1].values.token'],
      ['unknown-preset-variable', 'presets[1].values.nope'],
      ['multiple-default-presets', 'presets'],
    ]);
  });

  it('a literal wait longer than its Timeout', () => {
    const flow = base();
    flow.tasks.push({ id: 'pause', label: 'Pause', type: 'wait', settings: { seconds: 120 }, timeoutSeconds: 60 });
    expectOnly(flow, 'invalid', 'tasks[3].settings.seconds');
  });
});

describe('all problems at once', () => {
  function broken(): Json {
    const flow = base();
    flow.name = repeat(100);
    flow.accessLevel = 'Public';
    flow.colour = 'blue';
    flow.variables.push({ name: 'system_x' });
    flow.outputVariables.push({ name: 'source' });
    flow.tasks[0].label = repeat(50);
    flow.tasks[0].settings.url = '?missing';
    flow.tasks[1].type = 'teleport';
    flow.tasks[2].settings.description = repeat(1_001);
    flow.tasks.push(...[1, 2, 3, 4, 5, 6].map(email));
    flow.connections.push({ from: 'say', to: 'load' }, { from: 'say', to: 'nowhere' });
    flow.presets = [
      { name: repeat(90), values: {}, default: true },
      { name: 'B', values: {}, default: true },
    ];
    return flow;
  }

  it('names every problem, not just the first', () => {
    const codes = problemsOf(broken()).map((p) => p.code);
    expect(new Set(codes)).toEqual(
      new Set<FlowProblemCode>([
        'invalid',
        'too-long',
        'access-level',
        'reserved-name',
        'output-variable-clash',
        'unknown-task-type',
        'dangling-connection',
        'cycle',
        'undefined-variable',
        'too-many',
        'multiple-default-presets',
      ]),
    );
    expect(problemsOf(broken())).toHaveLength(14);
  });

  it('parseFlow throws one FlowValidationError listing them all', () => {
    let error: unknown;
    try {
      parseFlow(broken());
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(FlowValidationError);
    const e = error as FlowValidationError;
    expect(e.kind).toBe('validation');
    expect(e.problems).toHaveLength(14);
    expect(e.message).toMatch(/^The flow has 14 problems: \(1\) /);
    for (const p of e.problems) expect(e.message).toContain(p.message);
  });
});

describe('the README example', () => {
  it('is the full-example fixture, and valid', () => {
    const readme = readFileSync(new URL('../../../statemachines/README.md', import.meta.url), 'utf8');
    const section = readme.slice(readme.indexOf('### Full example'));
    const block = /```json\n([\s\S]*?)```/.exec(section)![1]!;
    expect(JSON.parse(block)).toEqual(loadFixture('full-example'));
    expect(problemsOf(JSON.parse(block))).toEqual([]);
  });
});
