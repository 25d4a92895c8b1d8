import { useState } from 'react';
import { api, enc } from '../api';
import { ErrorLine, useAction, useLoad } from '../ui';

interface Schedule {
  id: string;
  label?: string;
  recurrence: Record<string, unknown>;
  timeZone?: string;
  enabled: boolean;
  nextRunAt?: string;
}
interface Hook {
  id: string;
  label?: string;
  type: string;
  dataset?: { account: string; dataset: string };
  enabled: boolean;
}

/** A flow's schedules (every day/hour/… at a time, in a time zone) and upload hooks. */
export function SchedulesAndHooks({ base }: { base: string }) {
  const schedules = useLoad(() => api<Schedule[]>('GET', `${base}/schedules`), [base]);
  const hooks = useLoad(() => api<Hook[]>('GET', `${base}/hooks`), [base]);
  const [scheduleLabel, setScheduleLabel] = useState('');
  const [hookLabel, setHookLabel] = useState('');
  const [every, setEvery] = useState('day');
  const [at, setAt] = useState('02:30');
  const [timeZone, setTimeZone] = useState(Intl.DateTimeFormat().resolvedOptions().timeZone);
  const [hookType, setHookType] = useState('dataUpload');
  const [hookAccount, setHookAccount] = useState('');
  const [hookDataset, setHookDataset] = useState('');
  const [run, error, busy] = useAction();
  return (
    <>
      <h3>Schedules</h3>
      <form
        className="row"
        onSubmit={(e) => {
          e.preventDefault();
          void run(async () => (await api('POST', `${base}/schedules`, { body: { label: scheduleLabel, recurrence: { every, at }, timeZone, enabled: true } }), schedules.reload()));
        }}
      >
        <label>
          Schedule label
          <input value={scheduleLabel} onChange={(e) => setScheduleLabel(e.target.value)} required />
        </label>
        <label>
          Run every
          <select value={every} onChange={(e) => setEvery(e.target.value)}>
            <option>hour</option>
            <option>day</option>
            <option>week</option>
            <option>month</option>
          </select>
        </label>
        <label>
          Schedule time (HH:MM)
          <input value={at} onChange={(e) => setAt(e.target.value)} />
        </label>
        <label>
          Schedule time zone
          <input value={timeZone} onChange={(e) => setTimeZone(e.target.value)} />
        </label>
        <button type="submit" disabled={busy}>
          Add schedule
        </button>
      </form>
      <ErrorLine error={schedules.error} />
      <ul>
        {(schedules.data ?? []).map((s) => (
          <li key={s.id}>
            {s.label ?? s.id}: {JSON.stringify(s.recurrence)} {s.timeZone} · {s.enabled ? 'on' : 'off'}
            {s.nextRunAt ? ` · next ${new Date(s.nextRunAt).toLocaleString()}` : ''}{' '}
            <button type="button" onClick={() => void run(async () => (await api('PATCH', `${base}/schedules/${enc(s.id)}`, { body: { enabled: !s.enabled } }), schedules.reload()))}>
              {s.enabled ? 'Turn off' : 'Turn on'} schedule {s.label ?? s.id}
            </button>
            <button type="button" onClick={() => void run(async () => (await api('DELETE', `${base}/schedules/${enc(s.id)}`), schedules.reload()))}>
              Delete schedule {s.label ?? s.id}
            </button>
          </li>
        ))}
      </ul>
      <h3>Hooks</h3>
      <form
        className="row"
        onSubmit={(e) => {
          e.preventDefault();
          void run(async () => (await api('POST', `${base}/hooks`, { body: { label: hookLabel, type: hookType, dataset: { account: hookAccount, dataset: hookDataset }, enabled: true } }), hooks.reload()));
        }}
      >
        <label>
          Hook label
          <input value={hookLabel} onChange={(e) => setHookLabel(e.target.value)} required />
        </label>
        <label>
          Hook runs the flow when
          <select value={hookType} onChange={(e) => setHookType(e.target.value)}>
            <option value="dataUpload">data is imported</option>
            <option value="assetUpload">an asset is uploaded</option>
          </select>
        </label>
        <label>
          Hook dataset account
          <input value={hookAccount} onChange={(e) => setHookAccount(e.target.value)} required />
        </label>
        <label>
          Hook dataset name
          <input value={hookDataset} onChange={(e) => setHookDataset(e.target.value)} required />
        </label>
        <button type="submit" disabled={busy}>
          Add hook
        </button>
      </form>
      <ErrorLine error={hooks.error} />
      <ul>
        {(hooks.data ?? []).map((h) => (
          <li key={h.id}>
            {h.label ?? h.id}: {h.type} on {h.dataset ? `${h.dataset.account}/${h.dataset.dataset}` : '?'} · {h.enabled ? 'on' : 'off'}{' '}
            <button type="button" onClick={() => void run(async () => (await api('DELETE', `${base}/hooks/${enc(h.id)}`), hooks.reload()))}>
              Delete hook {h.label ?? h.id}
            </button>
          </li>
        ))}
      </ul>
      <ErrorLine error={error} />
    </>
  );
}
