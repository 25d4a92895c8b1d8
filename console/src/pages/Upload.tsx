import { useEffect, useRef, useState } from 'react';
import { Upload as TusUpload } from 'tus-js-client';
import { api, csrfToken, errorText } from '../api';
import { ErrorLine } from '../ui';

interface Job {
  jobId: string;
  status: string;
  error?: { message?: string } | string;
  numberOfStatements?: number;
  indexingProgress?: number;
}

const FINAL = new Set(['finished', 'error', 'canceled']);
/** The job a file's upload belongs to, kept so a reload resumes it (tus keeps the upload URL). */
const jobKey = (base: string, file: File) => `ldp-upload:${base}:${file.name}:${file.size}:${file.lastModified}`;

/**
 * Upload with a progress bar and resume (tus 1.0.0 through tus-js-client): a job, the file's bytes
 * in 5 MiB chunks to …/jobs/{jobId}/add, then the job is started and its import progress polled.
 */
export function Upload({ base, onImported, kind = 'data' }: { base: string; onImported: () => void; kind?: 'data' | 'asset' }) {
  const [file, setFile] = useState<File>();
  const [sent, setSent] = useState<{ bytes: number; total: number }>();
  const [phase, setPhase] = useState<'idle' | 'uploading' | 'paused' | 'importing' | 'done'>('idle');
  const [job, setJob] = useState<Job>();
  const [error, setError] = useState<unknown>();
  const upload = useRef<TusUpload | undefined>(undefined);
  const alive = useRef(true);
  useEffect(() => {
    alive.current = true;
    return () => void ((alive.current = false), upload.current?.abort());
  }, []);

  const poll = async (jobId: string) => {
    const deadline = Date.now() + 30 * 60_000;
    for (let delay = 250; alive.current && Date.now() < deadline; delay = Math.min(delay * 1.5, 2_000)) {
      const current = await api<Job>('GET', `${base}/jobs/${jobId}`);
      setJob(current);
      if (FINAL.has(current.status)) {
        setPhase('done');
        if (current.status === 'error') setError(new Error(typeof current.error === 'string' ? current.error : (current.error?.message ?? 'The import failed.')));
        onImported();
        return;
      }
      await new Promise((r) => setTimeout(r, delay));
    }
  };

  const start = async () => {
    if (!file) return;
    setError(undefined);
    setJob(undefined);
    try {
      if (kind === 'asset') return startTus(`${base}/assets/add`, jobKey(`${base}/assets`, file), () => (setPhase('done'), onImported()));
      const key = jobKey(base, file);
      let jobId = localStorage.getItem(key) ?? undefined;
      if (jobId) {
        const known = await api<Job>('GET', `${base}/jobs/${jobId}`).catch(() => undefined);
        if (!known || known.status !== 'created') jobId = undefined;
      }
      if (!jobId) {
        jobId = (await api<Job>('POST', `${base}/jobs`, { body: { type: 'upload' } })).jobId;
        localStorage.setItem(key, jobId);
      }
      const id = jobId;
      await startTus(`${base}/jobs/${id}/add`, key, () => {
        setPhase('importing');
        void api<Job>('POST', `${base}/jobs/${id}/start`)
          .then((j) => (setJob(j), poll(id)))
          .catch((e: unknown) => (setError(e), setPhase('done')));
      });
    } catch (e) {
      setError(e);
      setPhase('idle');
    }
  };

  /** Sends the file with tus to `endpoint`, resuming an earlier upload of the same file there. */
  const startTus = async (endpoint: string, key: string, done: () => void) => {
    if (!file) return;
    {
      const tus = new TusUpload(file, {
        endpoint,
        chunkSize: 5 * 1024 * 1024,
        retryDelays: [0, 1000, 3000],
        metadata: { filename: file.name, filetype: file.type },
        headers: { 'x-csrf-token': csrfToken() },
        storeFingerprintForResuming: true,
        removeFingerprintOnSuccess: true,
        onProgress: (bytes, total) => setSent({ bytes, total }),
        onError: (e) => {
          const body = (e as { originalResponse?: { getBody(): string } }).originalResponse?.getBody();
          let message = errorText(e);
          try {
            message = (JSON.parse(body ?? '') as { message?: string }).message ?? message;
          } catch {
            if (body) message = body;
          }
          setError(new Error(message));
          setPhase('paused');
        },
        onSuccess: () => {
          localStorage.removeItem(key);
          done();
        },
      });
      upload.current = tus;
      const previous = await tus.findPreviousUploads();
      if (previous[0]) tus.resumeFromPreviousUpload(previous[0]);
      setPhase('uploading');
      tus.start();
    }
  };

  const percent = sent && sent.total > 0 ? Math.round((sent.bytes / sent.total) * 100) : 0;
  return (
    <div className="upload">
      <div className="row">
        <label>
          {kind === 'asset' ? 'Asset file (any file)' : 'Data file (N-Triples, Turtle, TriG, N-Quads, RDF/XML, JSON-LD; .gz too)'}
          <input type="file" onChange={(e) => (setFile(e.target.files?.[0]), setSent(undefined), setPhase('idle'))} />
        </label>
        <button type="button" disabled={!file || phase === 'uploading' || phase === 'importing'} onClick={() => void start()}>
          {phase === 'paused' ? 'Resume upload' : kind === 'asset' ? 'Upload asset' : 'Upload'}
        </button>
        {phase === 'uploading' ? (
          <button type="button" onClick={() => void upload.current?.abort().then(() => setPhase('paused'))}>
            Pause upload
          </button>
        ) : null}
      </div>
      {sent ? (
        <p>
          <label>
            Upload progress
            <progress max={100} value={percent} aria-valuetext={`${percent}%`} data-testid={`${kind}-upload-progress`} />
          </label>{' '}
          <span data-testid={`${kind}-upload-percent`}>{percent}%</span> of {(sent.total / 1e6).toFixed(1)} MB
        </p>
      ) : null}
      {job ? (
        <p role="status" data-testid="job-status">
          Import {job.status}
          {job.status === 'indexing' && job.indexingProgress !== undefined ? ` (${Math.round(job.indexingProgress * 100)}%)` : ''}
          {job.numberOfStatements !== undefined ? ` · ${job.numberOfStatements} statements` : ''}
        </p>
      ) : null}
      <ErrorLine error={error} />
    </div>
  );
}
