/**
 * The unmodified official TriplyDB JavaScript client (`@triply/triplydb`) against the embedded
 * platform: discovery from the token alone, accounts, organisations and datasets.
 */
import App from '@triply/triplydb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestPlatform } from '../support/platform.js';

let p: TestPlatform;
let aliceToken: string;

beforeAll(async () => {
  p = await TestPlatform.start();
  aliceToken = await p.createUser('alice');
  await p.createUser('bob');
});
afterAll(async () => {
  await p?.stop();
});

describe('@triply/triplydb', () => {
  it('finds the instance from the token alone (JWT iss) and reads the caller', async () => {
    const app = App.get(aliceToken);
    const info = await app.getInfo();
    expect(info.apiUrl).toBe(p.url);
    expect(await app.isCompatible('23.09.0')).toBe(true);
    const me = await app.getUser();
    expect((await me.getInfo()).accountName).toBe('alice');
  });

  it('reports a missing token the way it reports a 401', async () => {
    const app = App.get({ url: p.url });
    await expect(app.getUser()).rejects.toThrow(/401: Unauthorized\./);
  });

  it('creates, lists, updates and deletes datasets', async () => {
    const app = App.get({ url: p.url, token: aliceToken });
    const alice = await app.getAccount();
    const ds = await alice.addDataset('client-made', { displayName: 'Client made', accessLevel: 'internal', license: 'CC0 1.0' });
    const info = await ds.getInfo();
    expect(info).toMatchObject({ name: 'client-made', accessLevel: 'internal', license: 'CC0 1.0' });
    expect(await alice.hasDataset('client-made')).toBe(true);
    expect(await alice.hasDataset('never-made')).toBe(false);
    const ensured = await alice.ensureDataset('client-made', { accessLevel: 'internal' });
    expect((await ensured.getInfo()).id).toBe(info.id);
    await ds.update({ description: 'changed by the client' });
    expect((await (await alice.getDataset('client-made')).getInfo(true)).description).toBe('changed by the client');
    await expect(alice.addDataset('____')).rejects.toThrow(/A dataset name can only contain/);

    for (let i = 0; i < 35; i++) await alice.addDataset(`bulk-${i}`);
    const names: string[] = [];
    for await (const d of alice.getDatasets()) names.push((await d.getInfo()).name);
    expect(names).toHaveLength(36); // more than one default page of 30: the Link header was followed
    await ds.delete();
    expect(await alice.hasDataset('client-made')).toBe(false);
  });

  it('creates organisations and manages members', async () => {
    const app = App.get({ url: p.url, token: aliceToken });
    const alice = await app.getUser();
    const org = await alice.createOrganization('client-org', { name: 'Client org' });
    const bob = await app.getUser('bob');
    await org.addMember(bob, 'member');
    let members = await org.getMembers();
    expect(members.map((m) => [m.user.accountName, m.role]).sort()).toEqual([
      ['alice', 'owner'],
      ['bob', 'member'],
    ]);
    members = await org.changeRole(bob, 'owner');
    expect(members.find((m) => m.user.accountName === 'bob')?.role).toBe('owner');
    await org.removeMember(bob);
    expect((await org.getMembers()).map((m) => m.user.accountName)).toEqual(['alice']);
    expect((await alice.getOrganizations()).map((o) => o.slug)).toContain('client-org');
    await org.delete();
    await expect(app.getOrganization('client-org')).rejects.toThrow(/does not exist/);
  });
});
