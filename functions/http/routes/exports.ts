import { NotAcceptableError } from '../../domain/shared/errors.js';
import { EXPORT_FORMATS, formatByName, type RdfFormat } from '../../rdf/formats.js';
import { formatFromPath, negotiateRdfFormat } from '../../rdf/negotiate.js';
import type { OperationContext, Operations } from '../api.js';
import { singleQueryParam } from '../request.js';

/** The format of a linked-data response: the path extension wins, else the Accept header. */
function chooseFormat(ctx: OperationContext, offered: readonly RdfFormat[]): { format: RdfFormat; gzip: boolean } {
  const file = ctx.req.path.split('/').pop() ?? '';
  if (file.includes('.')) {
    const byPath = formatFromPath(file);
    if (byPath && offered.includes(byPath.format)) return byPath;
  }
  const format = negotiateRdfFormat(ctx.req.headers.accept, offered);
  if (!format) {
    throw new NotAcceptableError(
      `None of the formats in the Accept header is offered here; use one of ${offered.map((f) => f.mediaTypes[0]).join(', ')} (or a path extension such as download.ttl).`,
    );
  }
  return { format, gzip: false };
}

export const exportOperations: Operations = {
  async download(ctx) {
    const { format, gzip } = chooseFormat(ctx, EXPORT_FORMATS);
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
    chooseFormat(ctx, [formatByName('ntriples')]);
    const resource = singleQueryParam(ctx.req, 'resource') ?? '';
    const body = await ctx.services.exports.describe(ctx.caller, ctx.params.account!, ctx.params.dataset!, resource);
    return { status: 200, headers: { 'content-type': 'application/n-triples; charset=utf-8' }, body };
  },
};
