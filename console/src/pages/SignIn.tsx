import { useState, type FormEvent } from 'react';
import { api } from '../api';
import type { Me } from '../App';
import { ErrorLine, useAction } from '../ui';

export function SignIn({ onSignedIn }: { onSignedIn: (me: Me) => void }) {
  const [accountName, setAccountName] = useState('');
  const [password, setPassword] = useState('');
  const [run, error, busy] = useAction();
  const submit = (e: FormEvent) => {
    e.preventDefault();
    void run(async () => onSignedIn(await api<Me>('POST', '/login', { body: { accountName, password } })));
  };
  return (
    <main id="main" className="signin">
      <h1>Sign in</h1>
      <form onSubmit={submit}>
        <label>
          Account name
          <input name="accountName" autoComplete="username" value={accountName} onChange={(e) => setAccountName(e.target.value)} required />
        </label>
        <label>
          Password
          <input name="password" type="password" autoComplete="current-password" value={password} onChange={(e) => setPassword(e.target.value)} required />
        </label>
        <button type="submit" disabled={busy}>
          Sign in
        </button>
        <ErrorLine error={error} />
      </form>
    </main>
  );
}
