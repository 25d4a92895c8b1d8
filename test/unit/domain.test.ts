/** Pure rules: permissions, paging and route matching (no I/O). */
import { describe, expect, it } from 'vitest';
import { collectPage } from '../../functions/domain/shared/paging.js';
import { BUILT_IN_ROLES, permissionsOfRole, restrictToReadOnly } from '../../functions/domain/accounts/permissions.js';
import { canReadDataset } from '../../functions/domain/datasets/datasets.js';
import { matchRoute } from '../../functions/http/router.js';
import { ROUTES } from '../../functions/http/route-table.js';

describe('permissions', () => {
  it('owners hold every permission, members the everyday ones', () => {
    expect(permissionsOfRole('owner', []).has('manageAccount')).toBe(true);
    expect(permissionsOfRole('member', []).has('manageAccount')).toBe(false);
    expect([...permissionsOfRole('member', [])].sort()).toEqual([...BUILT_IN_ROLES.member].sort());
  });

  it('custom roles grant their permissions plus read flows; unknown roles only read flows', () => {
    const roles = [{ name: 'runner', permissions: ['runFlows' as const] }];
    expect([...permissionsOfRole('runner', roles)].sort()).toEqual(['readFlows', 'runFlows']);
    expect([...permissionsOfRole('vanished', roles)]).toEqual(['readFlows']);
  });

  it('read-only tokens keep membership but lose writes', () => {
    const restricted = restrictToReadOnly({ isMember: true, permissions: permissionsOfRole('owner', []) });
    expect(restricted.isMember).toBe(true);
    expect([...restricted.permissions]).toEqual(['readFlows']);
  });

  it('dataset visibility follows the access level', () => {
    expect(canReadDataset('public', false, false)).toBe(true);
    expect(canReadDataset('internal', false, false)).toBe(false);
    expect(canReadDataset('internal', true, false)).toBe(true);
    expect(canReadDataset('private', true, false)).toBe(false);
    expect(canReadDataset('private', true, true)).toBe(true);
  });
});

describe('collectPage', () => {
  const items = Array.from({ length: 10 }, (_, i) => i);
  const store = async (r: { after?: string; batch: number }) => {
    const start = r.after ? Number(r.after) + 1 : 0;
    const slice = items.slice(start, start + Math.min(r.batch, 3));
    return { items: slice.map((item) => ({ item, cursor: String(item) })), more: start + slice.length < items.length };
  };

  it('fills pages across batches, skipping invisible items, and gives next only while more exist', async () => {
    const even = async (n: number) => n % 2 === 0;
    const first = await collectPage(store, even, { limit: 2 });
    expect(first).toEqual({ items: [0, 2], next: '2' });
    const second = await collectPage(store, even, { limit: 2, after: first.next });
    expect(second).toEqual({ items: [4, 6], next: '6' });
    const last = await collectPage(store, even, { limit: 2, after: second.next });
    expect(last).toEqual({ items: [8], next: undefined });
  });

  it('gives no next when the page is exactly the rest', async () => {
    const all = await collectPage(store, async () => true, { limit: 10 });
    expect(all.items).toHaveLength(10);
    expect(all.next).toBeUndefined();
  });

  it('stops after a bounded number of batches', async () => {
    let calls = 0;
    const endless = async (r: { after?: string }) => {
      calls++;
      const n = r.after ? Number(r.after) + 1 : 0;
      return { items: [{ item: n, cursor: String(n) }], more: true };
    };
    const page = await collectPage(endless, async () => false, { limit: 5 }, 7);
    expect(page.items).toEqual([]);
    expect(calls).toBe(7);
  });
});

describe('matchRoute', () => {
  it('prefers literal segments over parameters', () => {
    const m = matchRoute('GET', '/datasets/alice/pets/prefixes');
    expect(m).toMatchObject({ kind: 'match', route: { operation: 'getPrefixes' }, params: { account: 'alice', dataset: 'pets' } });
    expect(matchRoute('GET', '/accounts/x/members')).toMatchObject({ route: { operation: 'listMembers' } });
  });

  it('tells a wrong method from an unknown path, and ignores a trailing slash', () => {
    expect(matchRoute('PUT', '/datasets/a/b')).toEqual({ kind: 'method-not-allowed', allowed: ['GET', 'PATCH', 'DELETE'] });
    expect(matchRoute('GET', '/nope')).toEqual({ kind: 'not-found' });
    expect(matchRoute('GET', '/datasets/a/')).toMatchObject({ route: { operation: 'listAccountDatasets' } });
  });

  it('every route of the table is reachable by its own path', () => {
    for (const route of ROUTES) {
      const path = route.path.replace(/\{(\w+)\}/g, 'x$1');
      expect(matchRoute(route.method, path)).toMatchObject({ kind: 'match', route: { operation: route.operation } });
    }
  });
});
