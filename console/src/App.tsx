import { lazy, Suspense, useEffect, useState } from 'react';
import { api, ApiError } from './api';
import { go, href, useRoute } from './router';
import { ErrorLine } from './ui';
import { SignIn } from './pages/SignIn';
import { AccountSettings } from './pages/AccountSettings';
import { DatasetList } from './pages/DatasetList';
import { DatasetPage } from './pages/DatasetPage';

// The query editor and the flow canvas load on demand: the first load stays small.
const QueryPage = lazy(() => import('./pages/QueryPage'));
const FlowsPage = lazy(() => import('./pages/FlowsPage'));
const FlowEditor = lazy(() => import('./flows/FlowEditor'));
const RunsPage = lazy(() => import('./pages/RunsPage'));
const AdminPage = lazy(() => import('./pages/AdminPage'));
const AccountsPage = lazy(() => import('./pages/AccountsPage'));
const SavedQueries = lazy(() => import('./pages/SavedQueries'));

export interface Me {
  accountName: string;
  email?: string;
  emailNotifications?: boolean;
  role?: string;
  [key: string]: unknown;
}

export function App() {
  const route = useRoute();
  const [me, setMe] = useState<Me | null | undefined>(undefined);
  const [error, setError] = useState<unknown>();
  useEffect(() => {
    api<Me>('GET', '/me').then(setMe, (e) => (e instanceof ApiError && e.status === 401 ? setMe(null) : setError(e)));
  }, []);

  if (error) return <ErrorLine error={error} />;
  if (me === undefined) return <p aria-busy="true">Loading…</p>;
  if (me === null) return <SignIn onSignedIn={(account) => (setMe(account), go('datasets', account.accountName))} />;

  const signOut = async () => {
    await api('POST', '/logout').catch(() => {});
    setMe(null);
    window.location.hash = '';
  };
  const [page, ...rest] = route;
  let body;
  if (page === 'account') body = <AccountSettings me={me} onChange={setMe} />;
  else if (page === 'datasets' && rest.length === 2) body = <DatasetPage account={rest[0]!} dataset={rest[1]!} />;
  else if (page === 'datasets') body = <DatasetList account={rest[0] ?? me.accountName} />;
  else if (page === 'query' && rest.length === 2) body = <QueryPage account={rest[0]!} dataset={rest[1]!} />;
  else if (page === 'flows' && rest.length === 1) body = <FlowsPage account={rest[0]!} />;
  else if (page === 'flows' && rest.length === 2) body = <FlowEditor account={rest[0]!} flow={rest[1]!} />;
  else if (page === 'runs') body = <RunsPage account={rest[0] ?? me.accountName} flow={rest[1]} />;
  else if (page === 'admin') body = <AdminPage />;
  else if (page === 'accounts') body = <AccountsPage me={me.accountName} account={rest[0]} />;
  else if (page === 'queries') body = <SavedQueries account={rest[0] ?? me.accountName} query={rest[1]} />;
  else body = <DatasetList account={me.accountName} />;

  return (
    <>
      <a className="skip" href="#main" onClick={(e) => (e.preventDefault(), document.getElementById('main')?.focus())}>
        Skip to content
      </a>
      <header>
        <nav aria-label="Main">
          <strong>Linked Data Platform</strong>
          <a href={href('datasets', me.accountName)}>Datasets</a>
          <a href={href('flows', me.accountName)}>Flows</a>
          <a href={href('runs', me.accountName)}>Runs</a>
          <a href={href('queries', me.accountName)}>Queries</a>
          <a href={href('accounts')}>Organisations</a>
          <a href={href('account')}>Account</a>
          {me.role === 'siteAdmin' ? <a href={href('admin')}>Admin</a> : null}
          <span className="spacer" />
          <span>Signed in as {me.accountName}</span>
          <button type="button" onClick={() => void signOut()}>
            Sign out
          </button>
        </nav>
      </header>
      <main id="main" tabIndex={-1}>
        <Suspense fallback={<p aria-busy="true">Loading…</p>}>{body}</Suspense>
      </main>
    </>
  );
}
