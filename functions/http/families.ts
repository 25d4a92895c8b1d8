import type { Operations } from './api.js';
import type { Family } from './route-table.js';
import { accountOperations } from './routes/accounts.js';
import { assetOperations } from './routes/data/assets.js';
import { authOperations } from './routes/auth.js';
import { datasetOperations } from './routes/datasets.js';
import { exportOperations } from './routes/data/exports.js';
import { graphOperations } from './routes/data/graphs.js';
import { copyOperations } from './routes/data/copy.js';
import { statementOperations } from './routes/data/statements.js';
import { importOperations } from './routes/data/imports.js';
import { infoOperations } from './routes/info.js';
import { openApiOperations } from './routes/openapi.js';
import { searchOperations } from './routes/search.js';
import { queryOperations } from './routes/queries.js';
import { pipelineOperations } from './routes/pipelines.js';
import { flowOperations } from './routes/flows/flows.js';
import { hookOperations } from './routes/flows/hooks.js';
import { scheduleOperations } from './routes/flows/schedules.js';
import { datasetSparqlOperations, serviceOperations, sparqlOperations } from './routes/services.js';
import { graphqlOperations } from './routes/graphql.js';
import { storyOperations } from './routes/stories.js';
import { datasetHookOperations } from './routes/dataset-hooks.js';

/** The operations each family's function serves; the route table names them. */
export const FAMILY_OPERATIONS: Record<Family, Operations> = {
  // The OpenAPI document (generated from the route table) is served beside the instance's info.
  info: { ...infoOperations, ...openApiOperations },
  auth: authOperations,
  accounts: accountOperations,
  // Stories, avatars and dataset webhooks: the data bucket (RW) and the table this family has.
  datasets: { ...datasetOperations, ...storyOperations, ...datasetHookOperations },
  imports: importOperations,
  // Copies and graph imports write a dataset's graphs, as the graph routes do.
  graphs: { ...graphOperations, ...copyOperations },
  // Statements and terms only read graph blobs.
  exports: { ...exportOperations, ...statementOperations },
  assets: assetOperations,
  services: serviceOperations,
  // GraphQL runs its SPARQL here: on AWS this family is in the VPC, where the services' hosts are.
  sparql: { ...sparqlOperations, ...graphqlOperations },
  'dataset-sparql': datasetSparqlOperations,
  search: searchOperations,
  // Pipelines run saved queries (issue 14), in the function that runs them.
  queries: { ...queryOperations, ...pipelineOperations },
  flows: { ...flowOperations, ...scheduleOperations, ...hookOperations },
};
