import { useState } from 'react';
import { api, enc } from '../api';
import { go, href } from '../router';
import { ErrorLine, Section, TableHead, useAction, useLoad } from '../ui';

interface Member {
  role: string;
  user: { accountName: string; name?: string };
}
interface Role {
  name: string;
  builtIn: boolean;
  permissions: string[];
}

/** The signed-in user's organisations, and one organisation's members, their roles and its custom roles. */
export default function AccountsPage({ me, account }: { me: string; account?: string }) {
  if (!account) return <Organisations me={me} />;
  return <Organisation account={account} />;
}

function Organisations({ me }: { me: string }) {
  const orgs = useLoad(() => api<{ accountName: string; name?: string }[]>('GET', `/accounts/${enc(me)}/orgs`), [me]);
  const [name, setName] = useState('');
  const [run, error, busy] = useAction();
  return (
    <>
      <h1>Organisations of {me}</h1>
      <ErrorLine error={orgs.error} />
      <ul className="cards">
        {(orgs.data ?? []).map((o) => (
          <li key={o.accountName}>
            <a href={href('accounts', o.accountName)}>{o.name || o.accountName}</a> · <a href={href('datasets', o.accountName)}>datasets</a> ·{' '}
            <a href={href('flows', o.accountName)}>flows</a>
          </li>
        ))}
      </ul>
      {orgs.data && orgs.data.length === 0 ? <p>No organisations yet.</p> : null}
      <Section title="New organisation">
        <form
          className="row"
          onSubmit={(e) => {
            e.preventDefault();
            void run(async () => {
              await api('POST', `/accounts/${enc(me)}/orgs`, { body: { accountName: name } });
              go('accounts', name);
            });
          }}
        >
          <label>
            Organisation name
            <input value={name} onChange={(e) => setName(e.target.value)} required />
          </label>
          <button type="submit" disabled={busy}>
            Create organisation
          </button>
        </form>
        <ErrorLine error={error} />
      </Section>
    </>
  );
}

function Organisation({ account }: { account: string }) {
  const base = `/accounts/${enc(account)}`;
  const members = useLoad(() => api<Member[]>('GET', `${base}/members`), [base]);
  const roles = useLoad(() => api<Role[]>('GET', `${base}/roles`), [base]);
  const permissions = [...new Set((roles.data ?? []).flatMap((r) => r.permissions))];
  const [memberName, setMemberName] = useState('');
  const [memberRole, setMemberRole] = useState('member');
  const [roleName, setRoleName] = useState('');
  const [rolePermissions, setRolePermissions] = useState<string[]>([]);
  const [run, error, busy] = useAction();
  const roleNames = (roles.data ?? []).map((r) => r.name);
  return (
    <>
      <h1>Organisation {account}</h1>
      <p>
        <a href={href('datasets', account)}>Datasets</a> · <a href={href('flows', account)}>Flows</a>
      </p>
      <ErrorLine error={error} />
      <Section title="Members">
        <ErrorLine error={members.error} />
        <table>
          <TableHead columns={['Member', 'Role']} />
          <tbody>
            {(members.data ?? []).map((m) => (
              <tr key={m.user.accountName}>
                <td>{m.user.accountName}</td>
                <td>
                  <select
                    aria-label={`Role of ${m.user.accountName}`}
                    value={m.role}
                    onChange={(e) => void run(async () => (await api('PATCH', `${base}/members/${enc(m.user.accountName)}`, { body: { role: e.target.value } }), members.reload()))}
                  >
                    {roleNames.map((r) => (
                      <option key={r}>{r}</option>
                    ))}
                  </select>
                </td>
                <td>
                  <button type="button" onClick={() => void run(async () => (await api('DELETE', `${base}/members/${enc(m.user.accountName)}`), members.reload()))}>
                    Remove {m.user.accountName}
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        <form
          className="row"
          onSubmit={(e) => {
            e.preventDefault();
            void run(async () => (await api('POST', `${base}/members`, { body: { accountName: memberName, role: memberRole } }), setMemberName(''), members.reload()));
          }}
        >
          <label>
            New member (account name)
            <input value={memberName} onChange={(e) => setMemberName(e.target.value)} required />
          </label>
          <label>
            Their role
            <select value={memberRole} onChange={(e) => setMemberRole(e.target.value)}>
              {roleNames.map((r) => (
                <option key={r}>{r}</option>
              ))}
            </select>
          </label>
          <button type="submit" disabled={busy}>
            Add member
          </button>
        </form>
      </Section>
      <Section title="Roles">
        <ErrorLine error={roles.error} />
        <ul>
          {(roles.data ?? []).map((r) => (
            <li key={r.name}>
              <strong>{r.name}</strong> {r.builtIn ? '(built in)' : ''}: {r.permissions.join(', ')}{' '}
              {r.builtIn ? null : (
                <button type="button" onClick={() => void run(async () => (await api('DELETE', `${base}/roles/${enc(r.name)}`), roles.reload()))}>
                  Delete role {r.name}
                </button>
              )}
            </li>
          ))}
        </ul>
        <form
          onSubmit={(e) => {
            e.preventDefault();
            void run(async () => (await api('POST', `${base}/roles`, { body: { name: roleName, permissions: rolePermissions } }), setRoleName(''), roles.reload()));
          }}
        >
          <label>
            Custom role name
            <input value={roleName} onChange={(e) => setRoleName(e.target.value)} required />
          </label>
          <fieldset>
            <legend>Permissions</legend>
            {permissions.map((p) => (
              <label key={p} className="inline">
                <input
                  type="checkbox"
                  checked={rolePermissions.includes(p)}
                  onChange={(e) => setRolePermissions(e.target.checked ? [...rolePermissions, p] : rolePermissions.filter((x) => x !== p))}
                />
                {p}
              </label>
            ))}
          </fieldset>
          <button type="submit" disabled={busy}>
            Create role
          </button>
        </form>
      </Section>
    </>
  );
}
