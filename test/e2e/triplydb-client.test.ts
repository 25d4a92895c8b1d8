/**
 * The unmodified official TriplyDB JavaScript client (`@triply/triplydb`) against the embedded
 * platform: discovery from the token alone, accounts, organisations and datasets.
 */
import App from '@triply/triplydb';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
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

  it('imports files (one over 5 MB), exports graphs, and stores asset versions', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ldp-client-'));
    try {
      const small = join(dir, 'small.ttl');
      await writeFile(small, '@prefix ex: <https://example.org/> .\nex:a ex:name "A" ; ex:knows ex:b .\n');
      const quads = join(dir, 'graphs.nq');
      await writeFile(quads, '<https://example.org/b> <https://example.org/name> "B" <https://example.org/graphs/named> .\n');
      // Over 5 MB: the client uploads it with tus.
      const big = join(dir, 'big.nt');
      const bigLines = 60_000;
      await writeFile(big, Array.from({ length: bigLines }, (_, i) => `<https://example.org/s${i}> <https://example.org/p> "value number ${i} with some padding to make the file larger than five megabytes" .\n`).join(''));
      expect((await readFile(big)).length).toBeGreaterThan(5 * 1024 * 1024);

      const app = App.get(aliceToken);
      const alice = await app.getAccount();
      const ds = await alice.addDataset('client-import');
      await ds.importFromFiles([small, quads, big], { defaultGraphName: 'https://example.org/graphs/default' });
      const info = await ds.getInfo(true);
      expect(info.statements).toBe(2 + 1 + bigLines);

      const graphs: Record<string, { toFile(path: string, opts?: object): Promise<void>; getInfo(): Promise<{ numberOfStatements: number }> }> = {};
      for await (const g of ds.getGraphs()) graphs[(await g.getInfo()).graphName] = g as never;
      expect(Object.keys(graphs).sort()).toEqual(['https://example.org/graphs/default', 'https://example.org/graphs/named']);
      expect((await graphs['https://example.org/graphs/default']!.getInfo()).numberOfStatements).toBe(2 + bigLines);

      const trig = join(dir, 'named.trig');
      await graphs['https://example.org/graphs/named']!.toFile(trig);
      expect(await readFile(trig, 'utf8')).toMatch(/<https:\/\/example\.org\/graphs\/named>\s*\{[\s\S]*"B"/);
      const ntGz = join(dir, 'default.nt.gz');
      await graphs['https://example.org/graphs/default']!.toFile(ntGz, { compressed: true });
      const exported = gunzipSync(await readFile(ntGz)).toString('utf8').trim().split('\n');
      expect(exported).toHaveLength(2 + bigLines);

      const assetFile = join(dir, 'notes.txt');
      await writeFile(assetFile, 'first version');
      const asset = await ds.uploadAsset(assetFile, 'notes.txt');
      await writeFile(assetFile, 'second version');
      await asset.addVersion(assetFile);
      const out = join(dir, 'out.txt');
      await asset.toFile(out);
      expect(await readFile(out, 'utf8')).toBe('second version');
      await asset.toFile(out, 0);
      expect(await readFile(out, 'utf8')).toBe('first version');
      expect((await ds.getAsset('notes.txt')).getInfo().versions).toHaveLength(2);

      await expect(alice.getDataset('does-not-exist').then((d) => d.getInfo())).rejects.toThrow(/It does not exist/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
