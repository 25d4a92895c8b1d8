/** A flow as Turtle: download (`flowToTurtle`) and paste back (`flowFromTurtle` → `validateFlow`). */
import { Parser, Writer, type Quad } from 'n3';
import { isomorphic } from 'rdf-isomorphic';
import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../../functions/domain/shared/errors.js';
import type { FlowDefinition } from '../../../functions/domain/flows/blueprints/model.js';
import { parseFlow, validateFlow } from '../../../functions/domain/flows/blueprints/validate.js';
import { FLOW_VOCABULARY, flowFromTurtle, flowToTurtle } from '../../../functions/domain/flows/blueprints/turtle.js';
import { fixtureNames, loadFixture } from './helpers.js';

const IRI = (flow: string) => `https://ldp.example/flows/blueprints/acme/${flow}`;
const A = (flow: string) => `https://a.example/flows/blueprints/museum/${flow}`;
const B = (flow: string) => `https://b.example/flows/blueprints/archive/${flow}`;
const PREFIXES = `@prefix flow: <${FLOW_VOCABULARY}>.\n@prefix rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#>.\n`;

const quads = (turtle: string): Quad[] => new Parser({ format: 'text/turtle' }).parse(turtle);
const paste = (turtle: string): FlowDefinition => parseFlow(flowFromTurtle(turtle));
const fixture = (name: string): FlowDefinition => parseFlow(loadFixture(name));

function validationError(run: () => unknown): ValidationError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).kind).toBe('validation');
    return error as ValidationError;
  }
  throw new Error('expected a ValidationError');
}

describe.each(fixtureNames())('fixture %s', (name) => {
  const flow = fixture(name);
  const turtle = flowToTurtle(flow, { flowIri: IRI(flow.id) });

  it('round-trips: download, paste, validate gives the same definition', () => {
    expect(paste(turtle)).toEqual(flow);
  });

  it('is deterministic: same flow, byte-identical Turtle', () => {
    expect(flowToTurtle(structuredClone(flow), { flowIri: IRI(flow.id) })).toBe(turtle);
  });

  it('download → paste → download again gives an isomorphic graph (and the same text)', () => {
    const again = flowToTurtle(paste(turtle), { flowIri: IRI(flow.id) });
    expect(isomorphic(quads(again), quads(turtle))).toBe(true);
    expect(again).toBe(turtle);
  });

  it('pastes Turtle downloaded from another instance (other IRIs)', () => {
    const fromA = flowToTurtle(flow, { flowIri: A(flow.id) });
    expect(fromA).toContain('https://a.example/');
    const onB = paste(fromA);
    expect(onB).toEqual(flow);
    expect(flowToTurtle(onB, { flowIri: B(flow.id) })).toBe(flowToTurtle(flow, { flowIri: B(flow.id) }));
    // Any base for relative IRIs gives the same definition.
    expect(flowFromTurtle(fromA, { baseIri: 'https://c.example/' })).toEqual(flowFromTurtle(fromA));
  });

  it('does not depend on the order of the triples', () => {
    const reversed = new Writer({ format: 'N-Triples' }).quadsToString([...quads(turtle)].reverse());
    expect(paste(reversed)).toEqual(flow);
  });
});

describe('flowToTurtle', () => {
  const flow = fixture('full-example');
  const turtle = flowToTurtle(flow, { flowIri: IRI(flow.id) });

  it('describes the flow and its parts with the flow: vocabulary', () => {
    expect(turtle).toContain(`@prefix flow: <${FLOW_VOCABULARY}>.`);
    expect(turtle).toContain(`<${IRI(flow.id)}> a flow:Flow;`);
    expect(turtle).toContain(`@prefix task: <${IRI(flow.id)}/tasks/>.`);
    expect(turtle).toMatch(/task:load a flow:Task;\n    flow:position 2;\n    flow:taskId "load";\n    flow:label "Load the export";\n    flow:taskType "loadFromUrl";\n    flow:timeoutSeconds 1800;\n    flow:settings "\{\\"createDataset\\":true,/);
    expect(turtle).toContain('flow:allowedOptions ("production" "acceptance")');
    expect(turtle).toContain('flow:from task:pickTarget;\n    flow:to task:map.');
    expect(turtle).toContain('flow:required true');
    expect(turtle).toMatch(/preset:Production a flow:Preset;[^.]*flow:default true;\n    flow:values "\{\\"environment\\":\\"production\\",/);
  });

  it('writes settings with sorted keys, so key order does not change the text', () => {
    const shuffled = structuredClone(flow);
    shuffled.tasks = shuffled.tasks.map((t) => ({ ...t, settings: Object.fromEntries(Object.entries(t.settings).reverse()) }));
    shuffled.presets = shuffled.presets.map((p) => ({ ...p, values: Object.fromEntries(Object.entries(p.values).reverse()) }));
    expect(flowToTurtle(shuffled, { flowIri: IRI(flow.id) })).toBe(turtle);
  });

  it('never writes a masked value, even when the object carries one', () => {
    const secret = 'S3cr3t-bearer-7f9c2e41';
    const leaky = {
      ...structuredClone(flow),
      maskedValues: [{ name: 'exportToken', description: 'Bearer token of the collection system', value: secret, values: { exportToken: secret } }],
      maskedValueValues: { exportToken: secret },
    } as unknown as FlowDefinition;
    const out = flowToTurtle(leaky, { flowIri: IRI(flow.id) });
    expect(out).not.toContain(secret);
    expect(out).toBe(turtle);
    expect(paste(out).maskedValues).toEqual([{ name: 'exportToken', description: 'Bearer token of the collection system' }]);
  });

  it('leaves out what is empty; the paste gets the defaults back', () => {
    const bare = parseFlow({
      id: 'bare',
      name: 'Bare',
      accessLevel: 'Private',
      tasks: [{ id: 'say', label: 'Say', type: 'setDescription', settings: { description: 'hi' } }],
    });
    const out = flowToTurtle(bare, { flowIri: IRI('bare') });
    expect(out).not.toContain('flow:description');
    expect(out).not.toContain('connection:');
    expect(paste(out)).toEqual(bare);
  });
});

describe('flowFromTurtle', () => {
  it('reads hand-written Turtle: relative IRIs, blank nodes, positions out of document order', () => {
    const turtle = `${PREFIXES}@base <https://a.example/flows/blueprints/acme/copy/>.
<> a flow:Flow; flow:id "copy"; flow:name "Copy"; flow:accessLevel "Private";
  flow:variable [ flow:position 1; flow:variableName "source"; flow:required true; flow:allowedOptions ("https://x.example/a" "https://x.example/b") ];
  flow:task <tasks/b>, <tasks/a>;
  flow:connection [ flow:from <tasks/a>; flow:to <tasks/b> ].
<tasks/b> flow:position 2; flow:taskId "say"; flow:label "Describe"; flow:taskType "setDescription";
  flow:settings "{\\"description\\": \\"Loaded ?source\\"}"^^rdf:JSON.
<tasks/a> flow:position 1; flow:taskId "load"; flow:label "Load"; flow:taskType "loadFromUrl"; flow:timeoutSeconds 60;
  flow:settings """{"url": "?source", "dataset": {"account": "a", "dataset": "d"}}"""^^rdf:JSON.
`;
    expect(paste(turtle)).toEqual({
      formatVersion: 1,
      id: 'copy',
      name: 'Copy',
      description: '',
      accessLevel: 'Private',
      variables: [{ name: 'source', description: '', required: true, allowedOptions: ['https://x.example/a', 'https://x.example/b'] }],
      outputVariables: [],
      maskedValues: [],
      presets: [],
      tasks: [
        { id: 'load', label: 'Load', type: 'loadFromUrl', settings: { url: '?source', dataset: { account: 'a', dataset: 'd' } }, timeoutSeconds: 60 },
        { id: 'say', label: 'Describe', type: 'setDescription', settings: { description: 'Loaded ?source' } },
      ],
      connections: [{ from: 'load', to: 'say' }],
    });
    // Without @base, relative IRIs still identify the parts.
    expect(paste(turtle.replace(/@base <[^>]*>\.\n/, ''))).toEqual(paste(turtle));
  });

  it('leaves checking the definition to validateFlow', () => {
    const turtle = `${PREFIXES}<f> a flow:Flow; flow:id "x"; flow:name "X"; flow:accessLevel "Public".`;
    const result = validateFlow(flowFromTurtle(turtle));
    expect(result.ok).toBe(false);
    expect(!result.ok && result.problems.map((p) => p.code)).toEqual(['access-level']);
  });

  describe('errors say what to fix', () => {
    const flow = fixture('full-example');
    const turtle = flowToTurtle(flow, { flowIri: IRI(flow.id) });

    it('a Turtle syntax error, with its line', () => {
      const broken = `${PREFIXES}<f> a flow:Flow;\n  flow:name "unterminated .\n`;
      const error = validationError(() => flowFromTurtle(broken));
      expect(error.message).toMatch(/^The Turtle has a syntax error: .*line 4/);
      expect(validationError(() => flowFromTurtle('<f> a flow:Flow.')).message).toMatch(/Undefined prefix "flow:" on line 1/);
    });

    it('no flow:Flow resource', () => {
      const error = validationError(() => flowFromTurtle(`${PREFIXES}<f> flow:name "X".`));
      expect(error.message).toMatch(/^No flow found: the Turtle must describe one resource of type flow:Flow/);
      expect(error.message).toContain(FLOW_VOCABULARY);
      expect(validationError(() => flowFromTurtle('')).message).toMatch(/^No flow found/);
    });

    it('more than one flow', () => {
      const two = turtle + flowToTurtle(fixture('linear'), { flowIri: IRI('linear') });
      const error = validationError(() => flowFromTurtle(two));
      expect(error.message).toMatch(/^The Turtle describes 2 flows \(<.*museum-collection>, <.*linear>\); paste one flow at a time\.$/);
    });

    it('a malformed rdf:JSON literal, naming the property and the resource', () => {
      const broken = turtle.replace('flow:settings "{\\"seconds\\":30}"^^rdf:JSON', 'flow:settings "{seconds: 30"^^rdf:JSON');
      expect(broken).not.toBe(turtle);
      const error = validationError(() => flowFromTurtle(broken));
      expect(error.message).toMatch(/^Task "cooldown": flow:settings is not valid JSON \(.+\); write it as a JSON literal/);

      const presetValues = turtle.replace(/flow:values "[^\n]*"\^\^rdf:JSON\./, 'flow:values "[1,"^^rdf:JSON.');
      expect(validationError(() => flowFromTurtle(presetValues)).message).toMatch(/^Preset "Production": flow:values is not valid JSON/);

      const notALiteral = turtle.replace('flow:settings "{\\"seconds\\":30}"^^rdf:JSON', 'flow:settings <https://x.example/settings>');
      expect(validationError(() => flowFromTurtle(notALiteral)).message).toMatch(/flow:settings must be an rdf:JSON literal, not <https:\/\/x\.example\/settings>/);
    });

    it('a misspelt flow: property, or a masked value carrying a value', () => {
      const misspelt = turtle.replace('flow:label "Load the export"', 'flow:lable "Load the export"');
      expect(validationError(() => flowFromTurtle(misspelt)).message).toMatch(/^Task "load" has an unknown property flow:lable; remove it or check its spelling/);
      const leaked = turtle.replace('flow:variableName "exportToken";', 'flow:variableName "exportToken"; flow:value "S3cr3t";');
      expect(validationError(() => flowFromTurtle(leaked)).message).toMatch(/^Masked value "exportToken" has an unknown property flow:value/);
    });

    it('a connection to something that is not a task of the flow', () => {
      const dangling = turtle.replace('flow:to task:map.', 'flow:to <https://x.example/elsewhere>.');
      expect(validationError(() => flowFromTurtle(dangling)).message).toMatch(
        /^Connection <.*\/connections\/pickTarget-map>: flow:to points to <https:\/\/x\.example\/elsewhere>, which is not a task of the flow/,
      );
    });

    it('two values where one is expected, a bad position, a broken list', () => {
      const twice = turtle.replace('flow:name "Museum collection: nightly refresh";', 'flow:name "One", "Two";');
      expect(validationError(() => flowFromTurtle(twice)).message).toBe('The flow has 2 values for flow:name ("One", "Two"); keep one.');
      const position = turtle.replace(/(task:load a flow:Task;\n    flow:position) 2/, '$1 "second"');
      expect(validationError(() => flowFromTurtle(position)).message).toMatch(/^Task "load": flow:position must be a whole number/);
      const list = turtle.replace('flow:allowedOptions ("production" "acceptance")', 'flow:allowedOptions [ rdf:first "production" ]');
      expect(validationError(() => flowFromTurtle(list)).message).toMatch(/^Variable "environment": flow:allowedOptions is not a well-formed list/);
    });
  });
});
