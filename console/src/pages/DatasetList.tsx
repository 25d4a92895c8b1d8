import { useState, type FormEvent } from 'react';
import { api, enc } from '../api';
import { go, href } from '../router';
import { ErrorLine, Section, useAction, useLoad } from '../ui';

interface Dataset {
  name: string;
  displayName?: string;
  accessLevel: string;
  statements?: number;
  graphCount?: number;
  owner?: { accountName: string };
}

export function DatasetList({ account }: { account: string }) {
  const list = useLoad(() => api<Dataset[]>('GET', `/datasets/${enc(account)}`), [account]);
  const [name, setName] = useState('');
  const [accessLevel, setAccessLevel] = useState('private');
  const [run, error, busy] = useAction();
  const create = (e: FormEvent) => {
    e.preventDefault();
    void run(async () => {
      const ds = await api<Dataset>('POST', `/datasets/${enc(account)}`, { body: { name, accessLevel } });
      go('datasets', account, ds.name);
    });
  };
  return (
    <>
      <h1>Datasets of {account}</h1>
      <Section title="New dataset">
        <form onSubmit={create} className="row">
          <label>
            Name
            <input name="datasetName" value={name} onChange={(e) => setName(e.target.value)} required />
          </label>
          <label>
            Access level
            <select value={accessLevel} onChange={(e) => setAccessLevel(e.target.value)}>
              <option value="private">private</option>
              <option value="internal">internal</option>
              <option value="public">public</option>
            </select>
          </label>
          <button type="submit" disabled={busy}>
            Create dataset
          </button>
        </form>
        <ErrorLine error={error} />
      </Section>
      <Section title="Datasets">
        <ErrorLine error={list.error} />
        {list.data && list.data.length === 0 ? <p>No datasets yet.</p> : null}
        <ul className="cards">
          {(list.data ?? []).map((d) => (
            <li key={d.name}>
              <a href={href('datasets', account, d.name)}>{d.displayName || d.name}</a>
              <span>
                {' '}
                · {d.accessLevel} · {d.statements ?? 0} statements
              </span>
            </li>
          ))}
        </ul>
      </Section>
    </>
  );
}
