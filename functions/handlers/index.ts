import type { FamilyHandler, Services } from '../http/api.js';
import type { Family } from '../http/route-table.js';
import * as accounts from './accounts.js';
import * as assets from './assets.js';
import * as auth from './auth.js';
import * as datasets from './datasets.js';
import * as exports from './exports.js';
import * as graphs from './graphs.js';
import * as imports from './imports.js';
import * as info from './info.js';
import * as queries from './queries.js';
import * as flows from './flows.js';
import * as datasetSparql from './dataset-sparql.js';
import * as services from './services.js';
import * as sparql from './sparql.js';
import * as search from './search.js';

/** Every family's handler module, for the embedded server to mount (Lambda loads each on its own). */
export const HANDLER_MODULES: Record<Family, { mount(services: Services): FamilyHandler }> = {
  info,
  auth,
  accounts,
  datasets,
  imports,
  graphs,
  exports,
  assets,
  services,
  sparql,
  'dataset-sparql': datasetSparql,
  search,
  queries,
  flows,
};
