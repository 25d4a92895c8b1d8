import { useEffect, useState } from 'react';
import { api, enc } from '../api';
import { href } from '../router';
import { ErrorLine, Section, useLoad } from '../ui';
import { FINAL_RUN, RunPanel, type Run } from '../flows/RunPanel';
import { SchedulesAndHooks } from '../flows/SchedulesAndHooks';

/** Runs of an account (or of one flow), refreshed while any of them goes on; one run in detail. */
export default function RunsPage({ account, flow }: { account: string; flow?: string }) {
  const blueprint = useLoad(async () => (flow ? api<{ blueprintId: string; name: string }>('GET', `/flows/blueprints/${enc(account)}/${enc(flow)}`) : undefined), [account, flow]);
  const [runs, setRuns] = useState<Run[]>();
  const [error, setError] = useState<unknown>();
  const [open, setOpen] = useState<string>();
  useEffect(() => {
    if (flow && !blueprint.data) return;
    let live = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const filter = blueprint.data ? `blueprintId=${enc(blueprint.data.blueprintId)}` : `account=${enc(account)}`;
    const tick = async (n: number) => {
      try {
        const list = await api<Run[]>('GET', `/flows/runs?${filter}&limit=50`);
        if (!live) return;
        setRuns(list);
        setError(undefined);
        if (list.every((r) => FINAL_RUN.has(r.status)) || n > 5_000) return;
      } catch (e) {
        if (live) setError(e);
      }
      if (live) timer = setTimeout(() => void tick(n + 1), 1_500);
    };
    void tick(0);
    return () => {
      live = false;
      if (timer) clearTimeout(timer);
    };
  }, [account, flow, blueprint.data]);
  return (
    <>
      <h1>
        Runs of {flow ? <a href={href('flows', account, flow)}>{blueprint.data?.name ?? flow}</a> : account}
      </h1>
      <ErrorLine error={blueprint.error ?? error} />
      <table>
        <thead>
          <tr>
            <th>Run</th>
            <th>Flow</th>
            <th>Status</th>
            <th>Started</th>
            <th>By</th>
          </tr>
        </thead>
        <tbody>
          {(runs ?? []).map((r) => (
            <tr key={r.id}>
              <td>
                <button type="button" onClick={() => setOpen(r.id)} aria-label={`Show run ${r.id}`}>
                  {r.id}
                </button>
              </td>
              <td>
                {r.flowId} v{r.version}
              </td>
              <td>
                <span className={`lamp ${r.status}`} aria-hidden="true" />
                {r.status}
              </td>
              <td>{new Date(r.createdAt).toLocaleString()}</td>
              <td>{r.startedBy}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {runs && runs.length === 0 ? <p>No runs yet.</p> : null}
      {open ? <RunPanel key={open} runId={open} /> : null}
      {flow ? (
        <Section title="Schedules and hooks">
          <SchedulesAndHooks base={`/flows/blueprints/${enc(account)}/${enc(flow)}`} />
        </Section>
      ) : null}
    </>
  );
}
