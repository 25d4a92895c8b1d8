import { useState, type FormEvent } from 'react';
import { api, enc } from '../api';
import type { Me } from '../App';
import { ErrorLine, Section, TableHead, useAction, useLoad } from '../ui';

interface Token {
  tokenId: string;
  description: string;
  readOnly: boolean;
  createdAt?: string;
}

export function AccountSettings({ me, onChange }: { me: Me; onChange: (me: Me) => void }) {
  const tokens = useLoad(() => api<Token[]>('GET', `/accounts/${enc(me.accountName)}/tokens`), [me.accountName]);
  const [description, setDescription] = useState('');
  const [readOnly, setReadOnly] = useState(false);
  const [created, setCreated] = useState<string>();
  const [runSwitch, switchError] = useAction();
  const [runCreate, createError, creating] = useAction();
  const [runRevoke, revokeError] = useAction();

  const create = (e: FormEvent) => {
    e.preventDefault();
    void runCreate(async () => {
      const res = await api<{ token: string }>('POST', `/accounts/${enc(me.accountName)}/tokens`, { body: { description, readOnly } });
      setCreated(res.token);
      setDescription('');
      tokens.reload();
    });
  };
  return (
    <>
      <h1>Account settings</h1>
      <Section title="Notifications">
        <label className="inline">
          <input
            type="checkbox"
            checked={me.emailNotifications ?? false}
            onChange={(e) => {
              const emailNotifications = e.target.checked;
              void runSwitch(async () => onChange({ ...me, ...(await api<Me>('PATCH', '/me', { body: { emailNotifications } })) }));
            }}
          />
          Email notifications (flow runs that fail, and the like)
        </label>
        <ErrorLine error={switchError} />
      </Section>
      <Section title="API tokens">
        <form onSubmit={create} className="row">
          <label>
            Description
            <input value={description} onChange={(e) => setDescription(e.target.value)} />
          </label>
          <label className="inline">
            <input type="checkbox" checked={readOnly} onChange={(e) => setReadOnly(e.target.checked)} /> Read only
          </label>
          <button type="submit" disabled={creating}>
            Create token
          </button>
        </form>
        <ErrorLine error={createError} />
        {created ? (
          <div className="notice" role="status">
            <p>Your new token, shown only this once: copy it now.</p>
            <label>
              New token
              <input readOnly value={created} onFocus={(e) => e.target.select()} data-testid="new-token" />
            </label>
            <button type="button" onClick={() => setCreated(undefined)}>
              Done
            </button>
          </div>
        ) : null}
        <ErrorLine error={tokens.error ?? revokeError} />
        <table>
          <TableHead columns={['Description', 'Access', 'Created']} />
          <tbody>
            {(tokens.data ?? []).map((t) => (
              <tr key={t.tokenId}>
                <td>{t.description || '(no description)'}</td>
                <td>{t.readOnly ? 'read only' : 'read and write'}</td>
                <td>{t.createdAt ? new Date(t.createdAt).toLocaleString() : ''}</td>
                <td>
                  <button
                    type="button"
                    aria-label={`Revoke token ${t.description || t.tokenId}`}
                    onClick={() => void runRevoke(async () => (await api('DELETE', `/accounts/${enc(me.accountName)}/tokens/${enc(t.tokenId)}`), tokens.reload()))}
                  >
                    Revoke
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </Section>
    </>
  );
}
