import { EXPORT_FORMATS, formatByName } from '../../../rdf/formats.js';
import type { Operations } from '../../api.js';
import { chooseFormat } from '../../negotiation.js';
import { singleQueryParam } from '../../request.js';
import { checkQueryParams } from '../../query-params.js';

export const exportOperations: Operations = checkQueryParams({
  async download(ctx) {
    const { format, gzip } = chooseFormat(ctx.req, { kind: 'rdf', formats: EXPORT_FORMATS });
    const graphName = singleQueryParam(ctx.req, 'graph');
    const body = await ctx.services.exports.download(ctx.caller, ctx.params.account!, ctx.params.dataset!, { graphName, format, gzip });
    const fileName = `${ctx.params.dataset}.${format.extensions[0]}${gzip ? '.gz' : ''}`;
    return {
      status: 200,
      headers: {
        // Gzip bytes go out as a gzip file, without Content-Encoding, as the TriplyDB client expects.
        'content-type': gzip ? 'application/gzip' : `${format.mediaTypes[0]}; charset=utf-8`,
        'content-disposition': `attachment; filename="${fileName}"`,
      },
      body,
    };
  },

  async describe(ctx) {
    chooseFormat(ctx.req, { kind: 'rdf', formats: [formatByName('ntriples')] });
    const resource = singleQueryParam(ctx.req, 'resource') ?? '';
    const body = await ctx.services.exports.describe(ctx.caller, ctx.params.account!, ctx.params.dataset!, resource);
    return { status: 200, headers: { 'content-type': 'application/n-triples; charset=utf-8' }, body };
  },
}, { download: ['graph'], describe: ['resource'] });
