/** SPARQL update: runs a SPARQL update on a dataset (behind the instance's own switch). */
import { analyzeSparql } from '../../../rdf/sparql-analysis.js';
import { childPath } from '../blueprints/problems.js';
import { datasetRef } from './settings-reader.js';
import { analyze, queryText, sparqlSource } from './sparql-source.js';
import { datasetOf, TaskFailure } from './task-context.js';
import type { TaskTypeDefinition } from './task-type.js';

export const sparqlUpdate: TaskTypeDefinition = {
  type: 'sparqlUpdate',
  title: 'SPARQL update',
  kind: 'data',
  mayRunLong: true,
  check(s, ctx) {
    const text = sparqlSource(s, 'update', ctx);
    datasetRef(s, 'dataset', true);
    const analysis = text === undefined ? undefined : analyze(text, childPath(s.at('update'), 'text'), ctx);
    if (analysis && analysis.kind !== 'update') {
      ctx.problem(childPath(s.at('update'), 'text'), 'query-form', 'This is a query, not an update; use a SPARQL query task for it.');
    }
    s.finish();
  },
  async run(ctx, services) {
    const update = await queryText(ctx, services, 'update');
    const { account, dataset } = datasetOf(ctx, ctx.settings.dataset, 'dataset', update.dataset);
    if ((await analyzeSparql(update.text)).kind !== 'update') throw new TaskFailure('The SPARQL update task needs an update (INSERT, DELETE, ...), not a query.');
    const result = await services.sparql.updateDataset(ctx.caller, account, dataset, update.text, ctx.apiUrl);
    ctx.log(`Updated ${account}/${dataset}: ${result.graphCount} graphs, ${result.statements} statements now.`);
    return { graphs: result.graphCount, statements: result.statements };
  },
};
