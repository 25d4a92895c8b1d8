import { useEffect, useState } from 'react';
import { api, enc } from '../api';
import { ErrorLine, useAction } from '../ui';

export interface Run {
  id: string;
  flowId: string;
  account?: string;
  version: number;
  status: string;
  startedBy?: string;
  preset?: string;
  createdAt: string;
  finishedAt?: string;
  error?: unknown;
  description?: string;
}
export interface TaskInstance {
  id: string;
  taskId: string;
  label: string;
  type: string;
  status: string;
  log: string[];
  error?: unknown;
  artifacts: { id: string; fileName: string; size: number; url: string }[];
}

export const FINAL_RUN = new Set(['finished', 'failed', 'timeout', 'aborted']);

const errorMessage = (e: unknown): string => (typeof e === 'string' ? e : e && typeof e === 'object' && 'message' in e ? String((e as { message: unknown }).message) : JSON.stringify(e));

/**
 * One run, live: polls the run and its task instances until the run ends (bounded: 6 hours of
 * polls at most). Task logs, errors, artifacts to download, and Stop run.
 */
export function RunPanel({ runId, onTasks }: { runId: string; onTasks?: (tasks: TaskInstance[], run: Run) => void }) {
  const [run, setRun] = useState<Run>();
  const [tasks, setTasks] = useState<TaskInstance[]>([]);
  const [error, setError] = useState<unknown>();
  const [stop, stopError, stopping] = useAction();
  useEffect(() => {
    let live = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const deadline = Date.now() + 6 * 3600_000;
    const tick = async (delay: number) => {
      try {
        const [r, t] = await Promise.all([api<Run>('GET', `/flows/runs/${enc(runId)}`), api<TaskInstance[]>('GET', `/flows/taskInstances?runId=${enc(runId)}`)]);
        if (!live) return;
        setRun(r);
        setTasks(t);
        setError(undefined);
        onTasks?.(t, r);
        if (FINAL_RUN.has(r.status) || Date.now() > deadline) return;
      } catch (e) {
        if (live) setError(e);
      }
      if (live) timer = setTimeout(() => void tick(Math.min(delay * 1.4, 3_000)), delay);
    };
    void tick(300);
    return () => {
      live = false;
      if (timer) clearTimeout(timer);
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [runId]);
  return (
    <section aria-label="Run" className="run-panel">
      <h3>
        Run {runId}:{' '}
        <span className={`lamp ${run?.status ?? 'none'}`} aria-hidden="true" />
        <span data-testid="run-status">{run?.status ?? 'loading'}</span>
      </h3>
      <ErrorLine error={error} />
      {run?.error ? <p className="error">{errorMessage(run.error)}</p> : null}
      {run && !FINAL_RUN.has(run.status) ? (
        <button type="button" disabled={stopping} onClick={() => void stop(async () => setRun(await api<Run>('POST', `/flows/runs/${enc(runId)}/abort`)))}>
          Stop run
        </button>
      ) : null}
      <ErrorLine error={stopError} />
      <table>
        <thead>
          <tr>
            <th>Task</th>
            <th>Status</th>
            <th>Log</th>
            <th>Artifacts</th>
          </tr>
        </thead>
        <tbody>
          {tasks.map((t) => (
            <tr key={t.id} data-testid={`task-${t.taskId}`}>
              <td>
                {t.label} <span className="hint">({t.taskId})</span>
              </td>
              <td>
                <span className={`lamp ${t.status}`} aria-hidden="true" />
                {t.status}
              </td>
              <td>
                {t.log.length ? <pre className="log">{t.log.join('\n')}</pre> : null}
                {t.error ? <p className="error">{errorMessage(t.error)}</p> : null}
              </td>
              <td>
                {t.artifacts.map((a) => (
                  <a key={a.id} href={a.url} download={a.fileName}>
                    {a.fileName} ({a.size} bytes)
                  </a>
                ))}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
