/**
 * Issue 11, area E: organisation takeover through a "Manage account" role, password changes and
 * sessions, sign-in throttling, oversized path segments and forged cursors, data folder modes and
 * the Host header. Everything through HTTP against the embedded platform.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consoleSession } from '../support/flows.js';
import { TestPlatform } from '../support/platform.js';

let p: TestPlatform;
let owner: string;
let manager: string;

beforeAll(async () => {
  p = await TestPlatform.start();
  owner = await p.createUser('olga');
  manager = await p.createUser('mallory');
  await p.createUser('oscar');
});
afterAll(async () => {
  await p?.stop();
});

const roleOf = async (org: string, member: string) => (await p.request('GET', `/accounts/${org}/members/${member}`)).body.role as string;

describe('finding 8: a "Manage account" role does not take over the organisation', () => {
  beforeAll(async () => {
    await p.createOrg('victim-org', owner);
    const role = await p.request('POST', '/accounts/victim-org/roles', { token: owner, body: { name: 'admin-lite', permissions: ['manageAccount'] } });
    expect(role.status).toBe(201);
    await p.addMember('victim-org', 'mallory', 'admin-lite', owner);
  });

  it('refuses the reported path: promoting itself to owner, then demoting the owner', async () => {
    const promote = await p.request('PATCH', '/accounts/victim-org/members/mallory', { token: manager, body: { role: 'owner' } });
    expect(promote.status).toBe(403);
    expect(promote.body.message).toMatch(/Only owners of "victim-org" .* may make someone owner/);
    expect(await roleOf('victim-org', 'mallory')).toBe('admin-lite');

    const demote = await p.request('PATCH', '/accounts/victim-org/members/olga', { token: manager, body: { role: 'admin-lite' } });
    expect(demote.status).toBe(403);
    expect(demote.body.message).toMatch(/may demote an owner/);
    expect(await roleOf('victim-org', 'olga')).toBe('owner');

    const remove = await p.request('DELETE', '/accounts/victim-org/members/olga', { token: manager });
    expect(remove.status).toBe(403);
    expect(remove.body.message).toMatch(/may remove an owner/);
    expect(await roleOf('victim-org', 'olga')).toBe('owner');
  });

  it('refuses adding an accomplice as owner, reparenting the organisation or deleting it', async () => {
    const add = await p.request('POST', '/accounts/victim-org/members', { token: manager, body: { accountName: 'oscar', role: 'owner' } });
    expect(add.status).toBe(403);
    expect((await p.request('GET', '/accounts/victim-org/members/oscar')).status).toBe(404);

    // An organisation the manager owns, made parent: its owners would inherit everything.
    await p.createOrg('mallory-holding', manager);
    const reparent = await p.request('PATCH', '/accounts/victim-org', { token: manager, body: { parent: 'mallory-holding' } });
    expect(reparent.status).toBe(403);
    expect(reparent.body.message).toMatch(/change its parent organisation/);
    expect((await p.request('GET', '/accounts/victim-org')).body.parent).toBeUndefined();

    const deleted = await p.request('DELETE', '/accounts/victim-org', { token: manager });
    expect(deleted.status).toBe(403);
    expect((await p.request('GET', '/accounts/victim-org')).status).toBe(200);
  });

  it('refuses granting more than it holds: a custom role with every permission, created or widened', async () => {
    const all = ['manageAccount', 'writeDatasets', 'readFlows', 'createFlows', 'runFlows', 'manageFlowBlueprints', 'manageFlowMaskedValues'];
    const create = await p.request('POST', '/accounts/victim-org/roles', { token: manager, body: { name: 'everything', permissions: all } });
    expect(create.status).toBe(403);
    expect(create.body.message).toMatch(/that grants writeDatasets, createFlows, runFlows, manageFlowBlueprints, manageFlowMaskedValues/);
    expect((await p.request('GET', '/accounts/victim-org/roles')).body.map((r: { name: string }) => r.name)).not.toContain('everything');

    // Widening its own role is the same grant.
    const widen = await p.request('PATCH', '/accounts/victim-org/roles/admin-lite', { token: manager, body: { permissions: all } });
    expect(widen.status).toBe(403);
    const builtIn = await p.request('PATCH', '/accounts/victim-org/roles/owner', { token: manager, body: { permissions: [] } });
    expect(builtIn.status).toBe(403);

    // A role the owner made with more permissions cannot be handed out by the manager either.
    await p.request('POST', '/accounts/victim-org/roles', { token: owner, body: { name: 'editor', permissions: ['writeDatasets'] } });
    const self = await p.request('PATCH', '/accounts/victim-org/members/mallory', { token: manager, body: { role: 'editor' } });
    expect(self.status).toBe(403);
    expect(self.body.message).toMatch(/that grants writeDatasets/);
    const other = await p.request('POST', '/accounts/victim-org/members', { token: manager, body: { accountName: 'oscar', role: 'member' } });
    expect(other.status).toBe(403);
    expect(await roleOf('victim-org', 'mallory')).toBe('admin-lite');
    expect((await p.request('POST', '/datasets/victim-org', { token: manager, body: { name: 'planted' } })).status).toBe(403);
  });

  it('still lets the manager hand out what it holds, and owners do everything', async () => {
    await p.request('POST', '/accounts/victim-org/roles', { token: owner, body: { name: 'viewer', permissions: [] } });
    expect((await p.request('POST', '/accounts/victim-org/members', { token: manager, body: { accountName: 'oscar', role: 'viewer' } })).status).toBe(201);
    expect((await p.request('PATCH', '/accounts/victim-org/members/oscar', { token: manager, body: { role: 'admin-lite' } })).status).toBe(200);
    expect((await p.request('DELETE', '/accounts/victim-org/members/oscar', { token: manager })).status).toBe(204);
    // The owner promotes, and a second owner may then demote the first; the last owner stays.
    expect((await p.request('PATCH', '/accounts/victim-org/members/mallory', { token: owner, body: { role: 'owner' } })).status).toBe(200);
    expect((await p.request('PATCH', '/accounts/victim-org/members/olga', { token: manager, body: { role: 'member' } })).status).toBe(200);
    const last = await p.request('PATCH', '/accounts/victim-org/members/mallory', { token: manager, body: { role: 'member' } });
    expect(last.status).toBe(409);
    expect(last.body.message).toMatch(/without an owner/);
    expect((await p.request('DELETE', '/accounts/victim-org/members/mallory', { token: p.adminToken })).status).toBe(409);
  });
});

describe('password changes', () => {
  it('need the current password from the user itself, not from an administrator resetting it', async () => {
    await p.createUser('paula', { password: 'paula-password-123' });
    const session = await consoleSession(p, 'paula', 'paula-password-123');
    const missing = await p.request('PATCH', '/accounts/paula', { headers: session, body: { password: 'paula-new-password-1' } });
    expect(missing.status).toBe(400);
    expect(missing.body.message).toMatch(/currentPassword: send your current password/);
    const wrong = await p.request('PATCH', '/accounts/paula', {
      headers: session,
      body: { password: 'paula-new-password-1', currentPassword: 'not-the-password' },
    });
    expect(wrong.status).toBe(403);
    expect(wrong.body.message).toMatch(/not your current password/);
    // Nothing changed: the old password still signs in.
    expect((await p.request('POST', '/login', { body: { accountName: 'paula', password: 'paula-password-123' } })).status).toBe(200);

    const reset = await p.request('PATCH', '/accounts/paula', { token: p.adminToken, body: { password: 'paula-reset-password-2' } });
    expect(reset.status).toBe(200);
    expect((await p.request('POST', '/login', { body: { accountName: 'paula', password: 'paula-reset-password-2' } })).status).toBe(200);
  });

  it('end every session opened before the change; API tokens keep working', async () => {
    const token = await p.createUser('quinn', { password: 'quinn-password-123' });
    const first = await consoleSession(p, 'quinn', 'quinn-password-123');
    const second = await consoleSession(p, 'quinn', 'quinn-password-123');
    expect((await p.request('GET', '/me', { headers: first })).status).toBe(200);
    const changed = await p.request('PATCH', '/accounts/quinn', {
      headers: second,
      body: { password: 'quinn-new-password-1', currentPassword: 'quinn-password-123' },
    });
    expect(changed.status).toBe(200);
    const old = await p.request('GET', '/me', { headers: first });
    expect(old.status).toBe(401);
    expect(old.body.message).toMatch(/password changed/);
    expect((await p.request('GET', '/me', { headers: second })).status).toBe(401);
    expect((await p.request('GET', '/me', { token })).status).toBe(200);
    const fresh = await consoleSession(p, 'quinn', 'quinn-new-password-1');
    expect((await p.request('GET', '/me', { headers: fresh })).status).toBe(200);
    expect((await p.request('POST', '/login', { body: { accountName: 'quinn', password: 'quinn-password-123' } })).status).toBe(401);
  });
});
