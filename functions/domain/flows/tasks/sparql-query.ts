/**
 * SPARQL query: runs a SELECT or ASK query and saves the results as a file artifact (CSV or
 * JSON), or a CONSTRUCT or DESCRIBE query and writes its statements to a graph.
 */
import { analyzeSparql } from '../../../rdf/sparql-analysis.js';
import { ntLine, parseNtLines } from '../../../rdf/nt.js';
import type { GraphEntry } from '../../data/graphs.js';
import { assertAbsoluteIri } from '../../shared/names.js';
import { childPath } from '../blueprints/problems.js';
import { GraphStager, swapInGraphs } from './graph-writes.js';
import { datasetRef, isPlainObject } from './settings-reader.js';
import { analyze, queryText, sparqlSource } from './sparql-source.js';
import { datasetOf, substituted, TaskFailure, type TaskContext, type TaskServices } from './task-context.js';
import type { TaskTypeDefinition } from './task-type.js';

export const sparqlQuery: TaskTypeDefinition = {
  type: 'sparqlQuery',
  title: 'SPARQL query',
  kind: 'data',
  mayRunLong: true,
  check(s, ctx) {
    const text = sparqlSource(s, 'query', ctx);
    // A saved query may name its own dataset; inline SPARQL needs one.
    const saved = isPlainObject(s.value.query) && s.value.query.savedQuery !== undefined;
    datasetRef(s, 'dataset', !saved);
    const output = s.object('output', { required: true, what: 'where results go ({ "to": "graph" | "artifact", … })' });
    const to = output?.choice('to', ['graph', 'artifact'] as const, { required: true });
    let format: 'csv' | 'json' | undefined;
    if (output && to === 'graph') {
      datasetRef(output, 'dataset', true);
      output.text('graph', { required: true, what: 'the graph name (an IRI)' });
      output.flag('overwrite');
    } else if (output && to === 'artifact') {
      format = output.choice('format', ['csv', 'json'] as const, { required: true });
      output.text('fileName', { what: 'a file name' });
    }
    output?.finish();
    const analysis = text === undefined ? undefined : analyze(text, childPath(s.at('query'), 'text'), ctx);
    if (analysis?.kind === 'update') {
      ctx.problem(childPath(s.at('query'), 'text'), 'query-form', 'This is a SPARQL update; use a SPARQL update task for it.');
    } else if (analysis && to) {
      const form = analysis.form;
      const graphForm = form === 'construct' || form === 'describe';
      if (graphForm && to !== 'graph') {
        ctx.problem(s.at('output'), 'query-form', `A ${form.toUpperCase()} query writes a graph: use "to": "graph".`);
      } else if (!graphForm && to !== 'artifact') {
        ctx.problem(s.at('output'), 'query-form', `A ${form.toUpperCase()} query gives a table: use "to": "artifact" with format csv or json.`);
      } else if (form === 'ask' && format === 'csv') {
        ctx.problem(s.at('output'), 'query-form', 'An ASK query has no CSV form: use format json.');
      }
    }
    s.finish();
  },
  async run(ctx, services) {
    const query = await queryText(ctx, services, 'query');
    const { account, dataset } = datasetOf(ctx, ctx.settings.dataset, 'dataset', query.dataset);
    const analysis = await analyzeSparql(query.text);
    if (analysis.kind !== 'query') throw new TaskFailure('The SPARQL query task needs a query (SELECT, ASK, CONSTRUCT or DESCRIBE), not an update.');
    const output = (ctx.settings.output ?? {}) as Record<string, unknown>;
    const form = analysis.form.toUpperCase();
    if (output.to === 'graph') {
      if (form !== 'CONSTRUCT' && form !== 'DESCRIBE') throw new TaskFailure(`Writing to a graph needs a CONSTRUCT or DESCRIBE query; this is ${form}.`);
      const target = datasetOf(ctx, output.dataset, 'output.dataset');
      const graphName = substituted(ctx, output.graph);
      try {
        assertAbsoluteIri(graphName, 'output.graph');
      } catch (e) {
        throw new TaskFailure((e as Error).message);
      }
      const result = await services.sparql.queryDataset(ctx.caller, account, dataset, { query: query.text, format: 'application/n-triples' });
      const written = await writeGraph(ctx, services, target.account, target.dataset, graphName, result, output.overwrite === true);
      ctx.log(`Wrote ${written.numberOfStatements} statements to <${graphName}> in ${target.account}/${target.dataset}.`);
      return { graph: graphName, statements: written.numberOfStatements };
    }
    if (form !== 'SELECT' && form !== 'ASK') throw new TaskFailure(`Saving a file needs a SELECT or ASK query; this is ${form}.`);
    const format = form === 'ASK' ? 'json' : output.format === 'csv' ? 'csv' : 'json';
    const mediaType = format === 'csv' ? 'text/csv' : 'application/sparql-results+json';
    const result = await services.sparql.queryDataset(ctx.caller, account, dataset, { query: query.text, format: mediaType });
    const fileName = substituted(ctx, output.fileName) || `${ctx.taskId}.${format}`;
    const artifact = await ctx.addArtifact(fileName, mediaType, result);
    ctx.log(`Saved the results as "${fileName}" (${artifact.size} bytes).`);
    return { artifact: artifact.id, fileName };
  },
};

/**
 * Writes N-Triples into one graph of a dataset: replaces the graph (`overwrite`) or adds to it.
 * A new dataset version, swapped in like an import, so a failure changes nothing.
 */
async function writeGraph(
  ctx: TaskContext,
  services: TaskServices,
  account: string,
  datasetName: string,
  graphName: string,
  ntriples: string,
  overwrite: boolean,
): Promise<GraphEntry> {
  const { platform, access, catalog } = services;
  const { dataset } = await access.writableDataset(ctx.caller, account, datasetName, 'write graphs');
  // Blank nodes from this run must not merge with the graph's own.
  const prefix = `r${ctx.run.id.slice(0, 8)}${ctx.taskId}`;
  const stager = new GraphStager(platform, dataset.id);
  stager.touch(graphName);
  let staged;
  try {
    for (const q of parseNtLines(ntriples)) {
      const line = ntLine({
        subject: q.subject.startsWith('_:') ? `_:${prefix}${q.subject.slice(2)}` : q.subject,
        predicate: q.predicate,
        object: q.object.startsWith('_:') ? `_:${prefix}${q.object.slice(2)}` : q.object,
        graph: null,
      });
      // The writer takes lines without their newline (and so drops statements the graph holds).
      const draining = stager.add(graphName, line.slice(0, -1));
      if (draining) await draining;
    }
    staged = await stager.finish();
  } catch (e) {
    await stager.discard();
    throw e;
  }
  const [entry] = await swapInGraphs(platform, catalog, dataset, staged, overwrite);
  return entry!;
}
