import { useCallback, useEffect, useState, type ReactNode } from 'react';
import { errorText } from './api';

/** An API error where it happened, in the API's words. */
export function ErrorLine({ error }: { error: unknown }) {
  if (!error) return null;
  return (
    <p role="alert" className="error">
      {errorText(error)}
    </p>
  );
}

/** Loads once (and again on `reload`); the error stays beside what failed. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): { data?: T; error?: unknown; reload: () => void; loading: boolean } {
  const [state, setState] = useState<{ data?: T; error?: unknown; loading: boolean }>({ loading: true });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    setState((s) => ({ ...s, loading: true }));
    load().then(
      (data) => live && setState({ data, loading: false }),
      (error) => live && setState({ error, loading: false }),
    );
    return () => {
      live = false;
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { ...state, reload };
}

/** Runs an action, keeping its error to show next to the control that started it. */
export function useAction(): [(work: () => Promise<unknown>) => Promise<void>, unknown, boolean] {
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const run = useCallback(async (work: () => Promise<unknown>) => {
    setError(undefined);
    setBusy(true);
    try {
      await work();
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  }, []);
  return [run, error, busy];
}

export function Section({ title, children }: { title: string; children: ReactNode }) {
  const id = `h-${title.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`;
  return (
    <section aria-labelledby={id}>
      <h2 id={id}>{title}</h2>
      {children}
    </section>
  );
}

/** A table head whose last column holds each row's buttons, named for screen readers only. */
export function TableHead({ columns }: { columns: string[] }) {
  return (
    <thead>
      <tr>
        {columns.map((column) => (
          <th key={column}>{column}</th>
        ))}
        <th>
          <span className="sr-only">Actions</span>
        </th>
      </tr>
    </thead>
  );
}

/** Delete, once the browser's confirmation says yes; `what` names it ("graph …") in the label and the question. */
export function DeleteButton({ what, onConfirm }: { what: string; onConfirm: () => void }) {
  return (
    <button type="button" aria-label={`Delete ${what}`} onClick={() => window.confirm(`Delete the ${what}?`) && onConfirm()}>
      Delete
    </button>
  );
}
