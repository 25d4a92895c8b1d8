import { z } from 'zod';
import { graphView } from '../../../domain/data/graphs.js';
import { parsePageRequest } from '../../../domain/shared/paging.js';
import type { Operations } from '../../api.js';
import { jsonResponse } from '../../errors.js';
import { nextLink, parseJsonBody, singleQueryParam } from '../../request.js';
import { checkQueryParams } from '../../query-params.js';

export const RenameBody = z.object({ graphName: z.string('is required') });

export const graphOperations: Operations = checkQueryParams({
  async listGraphs({ req, params, services, caller, apiUrl }) {
    const page = parsePageRequest(singleQueryParam(req, 'limit'), singleQueryParam(req, 'after'));
    const result = await services.graphs.list(caller, params.account!, params.dataset!, page);
    return jsonResponse(200, result.items.map(graphView), nextLink(req, apiUrl, result.next));
  },

  async getGraph({ params, services, caller }) {
    return jsonResponse(200, graphView(await services.graphs.get(caller, params.account!, params.dataset!, params.graphId!)));
  },

  async renameGraph({ req, params, services, caller }) {
    const body = parseJsonBody(req, RenameBody);
    const graph = await services.graphs.rename(caller, params.account!, params.dataset!, params.graphId!, body.graphName);
    return jsonResponse(200, graphView(graph));
  },

  async deleteGraph({ params, services, caller }) {
    await services.graphs.delete(caller, params.account!, params.dataset!, params.graphId!);
    return { status: 204, headers: {} };
  },

  async deleteAllGraphs({ params, services, caller }) {
    await services.graphs.delete(caller, params.account!, params.dataset!, null);
    return { status: 204, headers: {} };
  },
}, { listGraphs: ['limit', 'after'] });
