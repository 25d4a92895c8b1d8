import { Readable } from 'node:stream';
import { formatFromMediaType, formatFromPath } from '../../rdf/negotiate.js';
import { RdfSyntaxError } from '../../rdf/parse.js';
import { GraphLimitError } from '../../rdf/parse/graph-lines.js';
import { ImportParser } from '../../rdf/parse/import-pool.js';
import { RDF_FORMATS, type RdfFormat } from '../../rdf/formats.js';
import type { FinishedUpload } from '../../ports/resumable-uploads.js';
import type { AccessService } from '../datasets/access-service.js';
import type { AccountRecord } from '../accounts/accounts.js';
import type { Caller } from '../shared/caller.js';
import { defaultGraphOf, type DatasetRecord } from '../datasets/datasets.js';
import { ConflictError, NotFoundError, ServiceUnavailableError, ValidationError } from '../shared/errors.js';
import { gunzipChecked, startsLikeGzip } from './gunzip.js';
import { graphBlobKey, type GraphCatalog } from './graph-catalog.js';
import { GraphBlobWriter } from './graph-writer.js';
import { freeGraphName, type GraphEntry, type GraphManifest } from './graphs.js';
import { FINAL_JOB_STATUSES, type JobFileRecord, type JobRecord } from './jobs.js';
import { assertAbsoluteIri } from '../shared/names.js';
import { ImportRecovery } from './import-recovery.js';
import { JobProgress } from './job-progress.js';
import type { Platform } from '../shared/platform.js';

/** Spec: the simple upload route takes bodies under 5 MB. */
export const SIMPLE_UPLOAD_LIMIT = 5 * 1024 * 1024;
export const MAX_GRAPHS_PER_IMPORT = 5000;
export const MAX_FILES_PER_JOB = 1000;
export const MAX_DOWNLOAD_BYTES = 20 * 1024 * 1024 * 1024;
const DOWNLOAD_TIMEOUT_MS = 30 * 60 * 1000;

export interface JobOptions {
  type?: 'upload' | 'download';
  defaultGraphName?: string;
  baseIRI?: string;
  overwriteAll?: boolean;
  mergeGraphs?: boolean;
  downloadUrls?: string[];
}



/** Peeks at the first bytes to decompress gzip even when the name does not say so. */
async function maybeGunzip(stream: Readable, named: boolean, fileName: string): Promise<AsyncIterable<Buffer>> {
  const iterator = stream[Symbol.asyncIterator]();
  const first = await iterator.next();
  const head: Buffer | undefined = first.done ? undefined : Buffer.from(first.value);
  async function* rest() {
    if (head) yield head;
    for (let r = await iterator.next(); !r.done; r = await iterator.next()) yield r.value;
  }
  const gzipped = named || startsLikeGzip(head);
  return gzipped ? gunzipChecked(rest(), fileName) : Readable.from(rest(), { objectMode: false });
}

/** The stream's bytes, each chunk counted by `count` (which may return a write to wait for) before it passes on. */
function counted(stream: Readable, count: (bytes: number) => Promise<void> | undefined): Readable {
  async function* pass() {
    for await (const chunk of stream) {
      const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array);
      const reported = count(buffer.length);
      if (reported) await reported;
      yield buffer;
    }
  }
  return Readable.from(pass(), { objectMode: false });
}

/**
 * Import jobs: files arrive (multipart, tus or URL), then one run parses them all into new graph
 * blobs and swaps them into the dataset in one conditional write. A failure anywhere leaves the
 * dataset exactly as it was.
 */
export class ImportService {
  constructor(
    private readonly platform: Platform,
    private readonly access: AccessService,
    private readonly catalog: GraphCatalog,
  ) {
    this.recovery = new ImportRecovery(platform, catalog);
  }

  private readonly recovery: ImportRecovery;

  private now(): string {
    return this.platform.clock.now().toISOString();
  }

  /** The watchdog's sweep (a scheduled worker on AWS): see ImportRecovery. */
  endStalledJobs(deadline: number): Promise<{ datasets: number; ended: number }> {
    return this.recovery.endStalledJobs(deadline);
  }

  /** After a restart of a single-process runtime: see ImportRecovery. */
  recoverInterrupted(): Promise<void> {
    return this.recovery.recoverInterrupted();
  }

  private async writable(caller: Caller | null, account: string, dataset: string) {
    return this.access.writableDataset(caller, account, dataset, 'import data');
  }

  /** Jobs are visible to whoever may read the dataset (as graphs are). */
  async job(caller: Caller | null, account: string, datasetName: string, jobId: string) {
    const { dataset, owner } = await this.access.readableDataset(caller, account, datasetName);
    const found = await this.platform.store.getJob(dataset.id, jobId);
    if (!found) throw new NotFoundError(`Job "${jobId}" does not exist.`);
    const job = await this.recovery.endIfStalled(found);
    const files = await this.platform.store.listJobFiles(dataset.id, jobId);
    return { job, files, dataset, owner };
  }

  async jobs(caller: Caller | null, account: string, datasetName: string) {
    const { dataset } = await this.access.readableDataset(caller, account, datasetName);
    const jobs = await Promise.all((await this.platform.store.listJobs(dataset.id)).map((job) => this.recovery.endIfStalled(job)));
    return Promise.all(
      jobs
        .sort((a, b) => a.createdAt.localeCompare(b.createdAt))
        .map(async (job) => ({ job, files: await this.platform.store.listJobFiles(dataset.id, job.jobId) })),
    );
  }

  /** The graph IRI for triples without one, when the job names none. */
  async createJob(caller: Caller | null, account: string, datasetName: string, options: JobOptions, baseUrl: string) {
    const { dataset, owner } = await this.writable(caller, account, datasetName);
    const type = options.type ?? 'upload';
    if (options.defaultGraphName !== undefined) assertAbsoluteIri(options.defaultGraphName, 'defaultGraphName');
    if (options.baseIRI !== undefined) assertAbsoluteIri(options.baseIRI, 'baseIRI');
    if (options.overwriteAll && options.mergeGraphs) {
      throw new ValidationError('overwriteAll and mergeGraphs exclude each other: choose one way to treat graphs that exist.');
    }
    if (type === 'download') {
      const urls = options.downloadUrls ?? [];
      if (urls.length === 0 || urls.length > 50) throw new ValidationError('downloadUrls: give 1 to 50 URLs to import.');
      urls.forEach((u, i) => {
        let url: URL;
        try {
          url = new URL(u);
        } catch {
          throw new ValidationError(`downloadUrls[${i}]: "${u}" is not a URL.`);
        }
        if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ValidationError(`downloadUrls[${i}]: only http and https URLs can be imported.`);
      });
    } else if (options.downloadUrls !== undefined) {
      throw new ValidationError('downloadUrls: only download jobs (type "download") take URLs.');
    }
    const now = this.now();
    const job: JobRecord = {
      jobId: this.platform.ids.newId(),
      datasetId: dataset.id,
      type,
      status: type === 'download' ? 'downloading' : 'created',
      defaultGraphName: options.defaultGraphName ?? defaultGraphOf(dataset, owner, baseUrl),
      baseIRI: options.baseIRI,
      overwriteAll: options.overwriteAll === true,
      mergeGraphs: options.mergeGraphs === true,
      downloadUrls: type === 'download' ? options.downloadUrls : undefined,
      createdAt: now,
      updatedAt: now,
    };
    await this.platform.store.createJob(job);
    await this.platform.events.importStarted({ datasetId: dataset.id, jobId: job.jobId, apiUrl: baseUrl });
    if (type === 'download') return { job: await this.enqueue(job, {}), dataset, owner };
    return { job, dataset, owner };
  }

  /** Checks a job still takes files, before an upload starts. */
  async jobAcceptingFiles(caller: Caller | null, account: string, datasetName: string, jobId: string) {
    const { dataset, owner } = await this.writable(caller, account, datasetName);
    const job = await this.platform.store.getJob(dataset.id, jobId);
    if (!job) throw new NotFoundError(`Job "${jobId}" does not exist.`);
    if (job.status !== 'created') {
      throw new ConflictError(`Job "${jobId}" is ${job.status}; files can only be added before it starts. Create a new job.`);
    }
    return { job, dataset, owner };
  }

  /** Records an uploaded file in its job. */
  async addFile(job: JobRecord, upload: FinishedUpload): Promise<JobFileRecord> {
    const files = await this.platform.store.listJobFiles(job.datasetId, job.jobId);
    if (files.length >= MAX_FILES_PER_JOB) throw new ValidationError(`A job takes at most ${MAX_FILES_PER_JOB} files.`);
    const file: JobFileRecord = {
      jobId: job.jobId,
      datasetId: job.datasetId,
      fileId: upload.uploadId,
      fileName: upload.fileName,
      fileSize: upload.size,
      blobKey: upload.blobKey,
      createdAt: this.now(),
    };
    if (!this.formatOf(file.fileName)) {
      await this.platform.blobs.uploads.delete(upload.blobKey);
      throw new ValidationError(this.unknownFormatMessage(file.fileName));
    }
    await this.platform.store.putJobFile(file);
    return file;
  }

  private formatOf(fileName: string, contentType?: string): { format: RdfFormat; gzip: boolean } | null {
    const byName = formatFromPath(fileName);
    if (byName) return byName;
    const byType = contentType ? formatFromMediaType(contentType) : null;
    return byType ? { format: byType, gzip: /\.gz$/i.test(fileName) } : null;
  }

  private unknownFormatMessage(fileName: string): string {
    const extensions = RDF_FORMATS.flatMap((f) => f.extensions.map((e) => `.${e}`)).join(', ');
    return `${fileName}: cannot tell the RDF format from the file name; use one of ${extensions} (optionally followed by .gz).`;
  }

  /** Starts a job; `uploadScope`: where its resumable uploads live, none of which may be unfinished. */
  async start(caller: Caller | null, account: string, datasetName: string, jobId: string, options: { uploadScope?: string; overwriteAll?: boolean } = {}) {
    const { job, dataset, owner } = await this.jobAcceptingFiles(caller, account, datasetName, jobId);
    const files = await this.platform.store.listJobFiles(dataset.id, jobId);
    const unfinished = options.uploadScope ? ((await this.platform.uploads.unfinished?.(options.uploadScope)) ?? []) : [];
    if (unfinished.length > 0) {
      // Starting now would drop these files without a word.
      const described = unfinished.map((u) =>
        u.size === undefined ? `${u.fileName} (${u.offset} bytes received, length not declared yet)` : `${u.fileName} (${u.size - u.offset} of ${u.size} bytes missing)`,
      );
      const what = unfinished.length === 1 ? 'an unfinished upload' : `${unfinished.length} unfinished uploads`;
      throw new ConflictError(
        `Job "${jobId}" has ${files.length === 0 ? 'no files yet and ' : ''}${what}: ${described.join(', ')}. Finish each upload (or delete it with a tus DELETE), then start the job.`,
      );
    }
    if (files.length === 0) throw new ValidationError('The job has no files; add files before starting it.');
    // `overwriteAll` given at start replaces the job's choice (and excludes merging).
    const choice = options.overwriteAll === undefined ? {} : { overwriteAll: options.overwriteAll, mergeGraphs: options.overwriteAll ? false : job.mergeGraphs };
    const started: JobRecord = { ...job, ...choice, status: 'pending', updatedAt: this.now() };
    await this.platform.store.updateJob(started, ['created']);
    await this.enqueue(started, { bytes: files.reduce((n, f) => n + f.fileSize, 0) });
    return { job: started, files, dataset, owner };
  }

  /**
   * Hands a started job to the task queue. When the queue refuses (on AWS: the worker task could
   * not be started), the job ends in error saying so, its files are removed and the caller is
   * told (503): nothing is left half started.
   */
  private async enqueue(job: JobRecord, hint: { bytes?: number }): Promise<JobRecord> {
    try {
      await this.platform.tasks.enqueueImport(job.datasetId, job.jobId, hint);
      return job;
    } catch (error) {
      this.platform.logger.error('import could not be started', { datasetId: job.datasetId, jobId: job.jobId, error });
      const message = `The import could not be started: ${(error as Error)?.message ?? String(error)}. The dataset was not changed; try again in a new job.`;
      const ended: JobRecord = { ...job, status: 'error', error: { message }, updatedAt: this.now(), finishedAt: this.now() };
      await this.platform.store.updateJob(ended, [job.status]).catch(() => {});
      await this.recovery.removeUploads(ended).catch(() => {});
      await this.platform.events.importFinished({ datasetId: job.datasetId, jobId: job.jobId, graphs: [], ok: false });
      throw new ServiceUnavailableError(message);
    }
  }

  async cancel(caller: Caller | null, account: string, datasetName: string, jobId: string) {
    const { dataset } = await this.writable(caller, account, datasetName);
    const job = await this.platform.store.getJob(dataset.id, jobId);
    if (!job) throw new NotFoundError(`Job "${jobId}" does not exist.`);
    if (FINAL_JOB_STATUSES.includes(job.status)) {
      await this.platform.store.deleteJob(dataset.id, jobId);
      return;
    }
    const canceled: JobRecord = { ...job, status: 'canceled', updatedAt: this.now(), finishedAt: this.now() };
    try {
      await this.platform.store.updateJob(canceled, ['created', 'pending', 'downloading']);
    } catch (e) {
      if (e instanceof ConflictError) throw new ConflictError(`Job "${jobId}" is already indexing and can no longer be canceled.`);
      throw e;
    }
    await this.recovery.removeUploads(canceled);
    await this.platform.events.importFinished({ datasetId: dataset.id, jobId, graphs: [], ok: false });
  }

  /**
   * Runs a started job to its end. Called by the task queue; never throws. Progress (bytes
   * downloaded, bytes read, statements indexed) is written to the job every few seconds.
   * `worker`: the worker running it, recorded on the job when the watchdog can ask about it (the
   * worker task's ARN on AWS). Resolves to how the job ended (`finished`, or `error` or
   * `canceled`), or undefined when it was not there to run (gone, or taken or ended already).
   */
  async run(datasetId: string, jobId: string, options: { worker?: string; progressEveryMs?: number } = {}): Promise<JobRecord['status'] | undefined> {
    let job = await this.platform.store.getJob(datasetId, jobId);
    if (!job || (job.status !== 'pending' && job.status !== 'downloading')) return undefined;
    const written: string[] = [];
    try {
      if (this.platform.settings.imports || options.worker) {
        // Taken now: the watchdog counts the worker's time limit from here (a queued job may wait).
        const taken: JobRecord = { ...job, updatedAt: this.now(), ...(options.worker ? { worker: options.worker } : {}) };
        await this.platform.store.updateJob(taken, [job.status]);
        job = taken;
      }
      const progress = new JobProgress(this.platform, job, options.progressEveryMs);
      if (job.status === 'downloading') await this.download(job, progress);
      job = await progress.transition({ ...progress.job, status: 'indexing', startedAt: this.now(), updatedAt: this.now() }, [progress.job.status]);
      const files = (await this.platform.store.listJobFiles(datasetId, jobId)).sort((a, b) => a.createdAt.localeCompare(b.createdAt));
      const parsed = await this.parse(job, files, written, progress);
      const importedAt = this.now();
      let mergedBlobs: string[] = [];
      const result = await this.catalog.swap(datasetId, async (current) => {
        // A retry starts over from the newer manifest; merged blobs of the last attempt are dropped.
        for (const key of mergedBlobs) await this.platform.blobs.data.delete(key).catch(() => {});
        mergedBlobs = [];
        return this.apply(current, parsed, job!, importedAt, mergedBlobs);
      });
      await this.catalog.collect(datasetId, result.previous);
      // Parts that were merged into another blob are no longer needed.
      const kept = new Set(result.manifest.graphs.map((g) => g.blobKey));
      for (const key of written) if (!kept.has(key)) await this.platform.blobs.data.delete(key).catch(() => {});
      const graphNames = [...parsed.keys()];
      const added = result.manifest.graphs.filter((g) => g.importedAt === importedAt).map((g) => g.graphName);
      await progress.transition(
        {
          ...progress.job,
          status: 'finished',
          graphNames,
          indexedGraphCount: graphNames.length,
          statements: [...parsed.values()].reduce((n, p) => n + p.statements, 0),
          updatedAt: this.now(),
          finishedAt: this.now(),
        },
        ['indexing'],
      );
      await this.platform.events.importFinished({ datasetId, jobId, graphs: added, ok: true });
      return 'finished';
    } catch (error) {
      for (const key of written) await this.platform.blobs.data.delete(key).catch(() => {});
      const message =
        error instanceof RdfSyntaxError || error instanceof ValidationError || error instanceof ConflictError || error instanceof NotFoundError
          ? error.message
          : 'The import failed because of an internal error; it was logged. The dataset was not changed.';
      if (!(error instanceof RdfSyntaxError || error instanceof ValidationError)) {
        this.platform.logger.error('import failed', { datasetId, jobId, error });
      }
      const current = await this.platform.store.getJob(datasetId, jobId);
      if (current && !FINAL_JOB_STATUSES.includes(current.status)) {
        await this.platform.store
          .updateJob({ ...current, status: 'error', error: { message }, updatedAt: this.now(), finishedAt: this.now() }, [current.status])
          .catch(() => {});
      }
      await this.platform.events.importFinished({ datasetId, jobId, graphs: [], ok: false });
      return current?.status === 'canceled' ? 'canceled' : 'error';
    } finally {
      if (job) await this.recovery.removeUploads(job);
    }
  }

  /** Fetches the URLs of a download job into the uploads store, as files of the job. */
  private async download(job: JobRecord, progress: JobProgress): Promise<void> {
    // A job queued again after a restart keeps what it had downloaded completely.
    const done = new Set((await this.platform.store.listJobFiles(job.datasetId, job.jobId)).map((f) => f.blobKey));
    for (const [i, url] of (job.downloadUrls ?? []).entries()) {
      const blobKey = `jobs/${job.jobId}/url${i}`;
      if (done.has(blobKey)) continue;
      let fetched;
      try {
        const limits = this.platform.settings.imports ?? { maxDownloadBytes: MAX_DOWNLOAD_BYTES, downloadTimeoutMs: DOWNLOAD_TIMEOUT_MS };
        fetched = await this.platform.fetcher.fetch(url, { maxBytes: limits.maxDownloadBytes, timeoutMs: limits.downloadTimeoutMs });
      } catch (e) {
        const limits = this.platform.settings.imports ?? { downloadTimeoutMs: DOWNLOAD_TIMEOUT_MS };
        const reason =
          (e as Error)?.name === 'TimeoutError' ? `it took longer than the ${Math.round(limits.downloadTimeoutMs / 60_000)} minutes a download may take here` : (e as Error).message;
        throw new ValidationError(`downloadUrls[${i}]: could not download ${url}: ${reason}`);
      }
      const fileId = this.platform.ids.newId();
      const info = await this.platform.blobs.uploads.put(blobKey, counted(fetched.body, (n) => progress.downloadedBytes(n)));
      const format = this.formatOf(fetched.fileName, fetched.contentType);
      if (!format) throw new ValidationError(this.unknownFormatMessage(fetched.fileName));
      const ext = format.format.extensions[0];
      // Name the file so its format is known to the parser even when the URL did not say.
      const fileName = formatFromPath(fetched.fileName) ? fetched.fileName : `${fetched.fileName}.${ext}${format.gzip ? '.gz' : ''}`;
      await this.platform.store.putJobFile({
        jobId: job.jobId,
        datasetId: job.datasetId,
        fileId,
        fileName,
        fileSize: info.size,
        blobKey,
        createdAt: this.now(),
      });
    }
  }

  /**
   * Parses every file into one new graph blob per graph name. Parsing, sorting into graphs and
   * dropping duplicates run in a worker thread (ImportParser); this thread reads, gzips and stores.
   */
  private async parse(job: JobRecord, files: JobFileRecord[], written: string[], progress: JobProgress) {
    const graphs = new Map<string, GraphBlobWriter>();
    const writerFor = (graphName: string): GraphBlobWriter => {
      let writer = graphs.get(graphName);
      if (!writer) {
        const key = graphBlobKey(job.datasetId, this.platform.ids.newId());
        written.push(key);
        writer = new GraphBlobWriter(this.platform.blobs.data, key);
        graphs.set(graphName, writer);
      }
      return writer;
    };
    const parser = new ImportParser(job.defaultGraphName, MAX_GRAPHS_PER_IMPORT, {
      lines: (graphName, bytes, lines) => writerFor(graphName).writeDistinct(bytes, lines),
      statements: (n) => progress.statements(n),
    });
    let clean = false;
    try {
      for (const [index, file] of files.entries()) {
        const detected = this.formatOf(file.fileName);
        if (!detected) throw new ValidationError(this.unknownFormatMessage(file.fileName));
        const raw = await this.platform.blobs.uploads.get(file.blobKey);
        if (!raw) throw new ValidationError(`${file.fileName}: the uploaded file is gone; upload it again in a new job.`);
        const input = await maybeGunzip(counted(raw, (n) => progress.indexedBytes(n)), detected.gzip, file.fileName);
        await parser.parseFile(input, {
          format: detected.format.name,
          baseIRI: job.baseIRI ?? job.defaultGraphName,
          blankNodePrefix: `j${job.jobId.slice(0, 8)}f${index}x`,
          fileName: file.fileName,
        });
      }
      const counts = await parser.finish();
      clean = true;
      const result = new Map<string, { blobKey: string; statements: number }>();
      // In the order the graphs first appeared in the files (the worker's order).
      for (const [name, statements] of counts) {
        const writer = writerFor(name);
        await writer.end();
        result.set(name, { blobKey: writer.blobKey, statements });
      }
      return result;
    } catch (e) {
      for (const writer of graphs.values()) writer.abort();
      if (e instanceof GraphLimitError) throw new ValidationError(e.message);
      throw e;
    } finally {
      parser.close(clean);
    }
  }

  /** The new manifest: new graphs added, clashing ones overwritten, merged or renamed. */
  private async apply(
    current: GraphManifest,
    parsed: Map<string, { blobKey: string; statements: number }>,
    job: JobRecord,
    importedAt: string,
    mergedBlobs: string[],
  ): Promise<GraphManifest> {
    const graphs = [...current.graphs];
    const taken = new Set(graphs.map((g) => g.graphName));
    for (const [graphName, part] of parsed) {
      const existing = graphs.findIndex((g) => g.graphName === graphName);
      const fresh: GraphEntry = { id: this.platform.ids.newId(), graphName, numberOfStatements: part.statements, importedAt, blobKey: part.blobKey };
      if (existing < 0) {
        graphs.push(fresh);
        taken.add(graphName);
      } else if (job.overwriteAll) {
        graphs[existing] = fresh;
      } else if (job.mergeGraphs) {
        const old = graphs[existing]!;
        const merged = await this.merge(job.datasetId, [old.blobKey, part.blobKey]);
        mergedBlobs.push(merged.blobKey);
        graphs[existing] = { ...old, numberOfStatements: merged.statements, importedAt, blobKey: merged.blobKey };
      } else {
        const name = freeGraphName(graphName, taken);
        graphs.push({ ...fresh, graphName: name });
        taken.add(name);
      }
    }
    return { graphs };
  }

  /** A new blob with the distinct lines of several graph blobs. */
  private async merge(datasetId: string, blobKeys: string[]): Promise<{ blobKey: string; statements: number }> {
    const writer = new GraphBlobWriter(this.platform.blobs.data, graphBlobKey(datasetId, this.platform.ids.newId()));
    try {
      for (const key of blobKeys) {
        for await (const line of await this.catalog.lines(key)) {
          const draining = line ? writer.add(line) : undefined;
          if (draining) await draining;
        }
      }
      await writer.end();
      return { blobKey: writer.blobKey, statements: writer.statements };
    } catch (e) {
      writer.abort();
      throw e;
    }
  }
}
