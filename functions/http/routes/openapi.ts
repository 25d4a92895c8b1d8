import type { Operations } from '../api.js';
import { jsonResponse } from '../errors.js';
import { ValidationError } from '../../domain/shared/errors.js';
import { buildOpenApiDocument } from '../openapi/generator.js';

/** Built once per API URL and process: the route table does not change while it runs. */
const documents = new Map<string, string>();

export const openApiOperations: Operations = {
  /** Our OpenAPI 3.1 document, public: it describes routes, never data. */
  async getOpenApi({ req, services, apiUrl }) {
    const unknown = [...req.query.keys()][0];
    if (unknown !== undefined) throw new ValidationError(`${unknown.slice(0, 64)}: unknown query parameter; this route takes none.`);
    let body = documents.get(apiUrl);
    if (!body) {
      body = JSON.stringify(buildOpenApiDocument({ apiUrl, version: services.platform.settings.version }));
      if (documents.size > 8) documents.clear();
      documents.set(apiUrl, body);
    }
    return { status: 200, headers: { 'content-type': 'application/json; charset=utf-8' }, body };
  },
};
