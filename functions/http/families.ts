import type { Operations } from './api.js';
import type { Family } from './route-table.js';
import { accountOperations } from './routes/accounts.js';
import { assetOperations } from './routes/data/assets.js';
import { authOperations } from './routes/auth.js';
import { datasetOperations } from './routes/datasets.js';
import { exportOperations } from './routes/data/exports.js';
import { graphOperations } from './routes/data/graphs.js';
import { importOperations } from './routes/data/imports.js';
import { infoOperations } from './routes/info.js';
import { searchOperations } from './routes/search.js';
import { queryOperations } from './routes/queries.js';
import { flowOperations } from './routes/flows/flows.js';
import { hookOperations } from './routes/flows/hooks.js';
import { scheduleOperations } from './routes/flows/schedules.js';
import { datasetSparqlOperations, serviceOperations, sparqlOperations } from './routes/services.js';
import { graphqlOperations } from './routes/graphql.js';

/** The operations each family's function serves; the route table names them. */
export const FAMILY_OPERATIONS: Record<Family, Operations> = {
  info: infoOperations,
  auth: authOperations,
  accounts: accountOperations,
  datasets: datasetOperations,
  imports: importOperations,
  graphs: graphOperations,
  exports: exportOperations,
  assets: assetOperations,
  services: serviceOperations,
  // GraphQL runs its SPARQL here: on AWS this family is in the VPC, where the services' hosts are.
  sparql: { ...sparqlOperations, ...graphqlOperations },
  'dataset-sparql': datasetSparqlOperations,
  search: searchOperations,
  queries: queryOperations,
  flows: { ...flowOperations, ...scheduleOperations, ...hookOperations },
};
