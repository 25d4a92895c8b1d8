import { z } from 'zod';
import { ValidationError } from '../../../domain/shared/errors.js';
import { SIMPLE_UPLOAD_LIMIT } from '../../../domain/data/import-service.js';
import { jobView } from '../../../domain/data/jobs.js';
import type { OperationContext, Operations } from '../../api.js';
import { jsonResponse } from '../../errors.js';
import { parseJsonBody, validate } from '../../request.js';
import { allowQueryParams, checkQueryParams } from '../../query-params.js';
import { bufferBody, fromWebResponse, isMultipart, receiveMultipart, toWebRequest } from '../../uploads.js';

const flag = z.union([z.boolean(), z.enum(['true', 'false']).transform((v) => v === 'true')]);

/** Unknown fields are ignored: the TriplyDB client and CLI send their whole defaults object. */
export const JobBody = z.object({
  type: z.enum(['upload', 'download'], 'must be "upload" or "download"').optional(),
  defaultGraphName: z.string().optional(),
  baseIRI: z.string().optional(),
  overwriteAll: flag.optional(),
  mergeGraphs: flag.optional(),
  downloadUrls: z.array(z.string()).optional(),
});

/** `POST …/jobs/{jobId}/start` body, optional: `overwriteAll` changes how the job treats graphs that exist. */
export const StartBody = z.strictObject({ overwriteAll: z.boolean().optional() });

const jobPath = (ctx: OperationContext, jobId: string) => `/datasets/${ctx.params.account}/${ctx.params.dataset}/jobs/${jobId}`;
const jobUrl = (ctx: OperationContext, jobId: string) => `${ctx.apiUrl}${jobPath(ctx, jobId)}`;

const TOO_LARGE =
  'The simple upload route takes bodies under 5 MB. For larger files create a job (POST /datasets/{account}/{dataset}/jobs), ' +
  'upload each file with tus 1.0.0 to /datasets/{account}/{dataset}/jobs/{jobId}/add, then POST .../jobs/{jobId}/start.';

export const importOperations: Operations = checkQueryParams({
  /** JSON: a job to add files to (or a URL import, which starts by itself). Multipart: files under 5 MB, started at once. */
  async createJob(ctx) {
    const { services, caller, params } = ctx;
    const { imports, platform } = services;
    if (!isMultipart(ctx.req)) {
      const body = parseJsonBody(await bufferBody(ctx.req), JobBody);
      const { job } = await imports.createJob(caller, params.account!, params.dataset!, body, ctx.apiUrl);
      return jsonResponse(201, jobView(job, [], jobUrl(ctx, job.jobId)));
    }
    // Check access before reading a byte of the body.
    await services.access.writableDataset(caller, params.account!, params.dataset!, 'import data');
    const received = await receiveMultipart(ctx.req, platform.blobs.uploads, 'incoming/', platform.ids.newId, SIMPLE_UPLOAD_LIMIT, TOO_LARGE);
    try {
      if (received.files.length === 0) throw new ValidationError('The multipart body has no file; send the data in a "file" field.');
      const options = validate(JobBody, { ...received.fields, type: undefined, downloadUrls: undefined });
      const { job } = await imports.createJob(caller, params.account!, params.dataset!, options, ctx.apiUrl);
      for (const f of received.files) {
        await imports.addFile(job, { uploadId: platform.ids.newId(), fileName: f.fileName, size: f.size, blobKey: f.blobKey, metadata: {} });
      }
      const started = await imports.start(caller, params.account!, params.dataset!, job.jobId);
      return jsonResponse(201, jobView(started.job, started.files, jobUrl(ctx, job.jobId)));
    } catch (e) {
      for (const f of received.files) await platform.blobs.uploads.delete(f.blobKey).catch(() => {});
      throw e;
    }
  },

  async listJobs(ctx) {
    const jobs = await ctx.services.imports.jobs(ctx.caller, ctx.params.account!, ctx.params.dataset!);
    return jsonResponse(200, jobs.map(({ job, files }) => jobView(job, files, jobUrl(ctx, job.jobId))));
  },

  async getJob(ctx) {
    const { job, files } = await ctx.services.imports.job(ctx.caller, ctx.params.account!, ctx.params.dataset!, ctx.params.jobId!);
    return jsonResponse(200, jobView(job, files, jobUrl(ctx, job.jobId)));
  },

  async startJob(ctx) {
    const { services, caller, params } = ctx;
    // tus uploads of the job live under this scope (see jobUpload): none may be left half done.
    // By the job's own part of the path: the account and dataset names may have been typed in
    // another case, or renamed, since the uploads were made (job ids are unique).
    const uploadScope = `/jobs/${params.jobId!}/add`;
    // No body (the TriplyDB client sends none), or `{overwriteAll}` as TriplyDB's description allows.
    const { overwriteAll } = parseJsonBody(ctx.req, StartBody);
    const { job, files } = await services.imports.start(caller, params.account!, params.dataset!, params.jobId!, { uploadScope, overwriteAll });
    // 202: the job is queued; it runs on its own (poll the job).
    return jsonResponse(202, jobView(job, files, jobUrl(ctx, job.jobId)));
  },

  /** `DELETE …/jobs`: the jobs in error or canceled, and those not yet indexing (canceled first); 200 with their ids. */
  async cancelAllJobs(ctx) {
    allowQueryParams(ctx.req, []);
    const deletedJobIds = await ctx.services.jobAdmin.clear(ctx.caller, ctx.params.account!, ctx.params.dataset!);
    return jsonResponse(200, { deletedJobIds });
  },

  async resetJob(ctx) {
    allowQueryParams(ctx.req, []);
    const job = await ctx.services.jobAdmin.reset(ctx.caller, ctx.params.account!, ctx.params.dataset!, ctx.params.jobId!);
    return jsonResponse(200, jobView(job, [], jobUrl(ctx, job.jobId)));
  },

  async deleteJobFile(ctx) {
    allowQueryParams(ctx.req, []);
    await ctx.services.jobAdmin.removeFile(ctx.caller, ctx.params.account!, ctx.params.dataset!, ctx.params.jobId!, ctx.params.sourceFileId!);
    return { status: 204, headers: {} };
  },

  async cancelJob(ctx) {
    await ctx.services.imports.cancel(ctx.caller, ctx.params.account!, ctx.params.dataset!, ctx.params.jobId!);
    return { status: 204, headers: {} };
  },

  /** tus creation (POST .../add) and the upload's own URL (HEAD/PATCH/DELETE .../add/{uploadId}). */
  async createJobUpload(ctx) {
    return jobUpload(ctx);
  },
  async jobUpload(ctx) {
    return jobUpload(ctx);
  },
});

async function jobUpload(ctx: OperationContext) {
  const { services, caller, params } = ctx;
  const { job } = await services.imports.jobAcceptingFiles(caller, params.account!, params.dataset!, params.jobId!);
  const response = await services.platform.uploads.handle(toWebRequest(ctx.req, ctx.apiUrl), {
    scope: `${jobPath(ctx, job.jobId)}/add`,
    baseUrl: ctx.apiUrl,
    onFinish: async (upload) => {
      await services.imports.addFile(job, upload);
    },
  });
  return fromWebResponse(response);
}
