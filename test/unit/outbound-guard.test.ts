/** Which destinations requests on a user's behalf may reach (pure address rules). */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { assertReachable, refusalOf } from '../../functions/adapters/common/outbound-guard.js';
import { FUZZ_SEED, MAX_EVENT_LOOP_BLOCK_MS, watchEventLoop } from '../support/fuzz.js';

const open = { allowPrivateNetworks: true };
const closed = { allowPrivateNetworks: false };

describe('the outbound policy', () => {
  it('never reaches link-local addresses such as cloud metadata, in any form', () => {
    for (const address of ['169.254.169.254', '169.254.0.1', 'fe80::1', 'fd00:ec2::254', '::ffff:169.254.169.254', '0.0.0.0']) {
      expect(refusalOf(address, open), address).toMatch(/never calls/);
      expect(refusalOf(address, closed), address).toMatch(/never calls/);
    }
  });

  it('reaches loopback and private networks only when the instance allows them', () => {
    for (const address of ['127.0.0.1', '10.1.2.3', '172.16.5.4', '192.168.1.1', '100.64.0.1', '::1', 'fd12:3456::1', '::ffff:10.0.0.1']) {
      expect(refusalOf(address, open), address).toBeNull();
      expect(refusalOf(address, closed), address).toMatch(/private-network/);
    }
  });

  it('never reaches the unspecified address, in any notation or embedded in another address', () => {
    const forms = ['::', '0::', '::0', '0:0:0:0:0:0:0:0', '0.0.0.0', '0.1.2.3', '::ffff:0.0.0.0', '::ffff:169.254.169.254', '::ffff:a9fe:a9fe', '64:ff9b::a9fe:a9fe', '2002:a9fe:a9fe::1', '::ffff:0:a9fe:a9fe'];
    for (const address of forms) {
      expect(refusalOf(address, open), address).toMatch(/never calls/);
      expect(refusalOf(address, closed), address).toMatch(/never calls/);
    }
  });

  it('never reaches multicast, broadcast, reserved or unparsable addresses', () => {
    for (const address of ['224.0.0.1', 'ff02::1', '255.255.255.255', '240.0.0.1', '192.0.2.1', '2001:db8::1', 'fec0::1', '64:ff9b:1::7f00:1']) {
      expect(refusalOf(address, open), address).toMatch(/never calls/);
    }
    expect(refusalOf('localhost', open)).toMatch(/not an IP address/);
  });

  it('treats every embedding of a loopback or private address as that address', () => {
    // IPv4-mapped (both notations), SIIT (rfc6145), NAT64 (rfc6052), 6to4, Teredo (client bits inverted), IPv4-compatible.
    const forms = ['::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:0:7f00:1', '64:ff9b::127.0.0.1', '64:ff9b::a00:1', '2002:7f00:1::', '2002:c0a8:101::1', '2001:0:4136:e378:8000:63bf:80ff:fffe', '::127.0.0.1'];
    for (const address of forms) {
      expect(refusalOf(address, open), address).toBeNull();
      expect(refusalOf(address, closed), address).toMatch(/private-network/);
    }
  });

  it('decides every IPv6 form that carries an IPv4 address as it decides that IPv4 address', () => {
    const hex = (hi: number, lo: number) => ((hi << 8) | lo).toString(16);
    const watch = watchEventLoop();
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 255 }), { minLength: 4, maxLength: 4 }), ([a, b, c, d]) => {
        const v4 = `${a}.${b}.${c}.${d}`;
        const forms = [
          `::ffff:${v4}`,
          `::ffff:${hex(a!, b!)}:${hex(c!, d!)}`,
          `::ffff:0:${v4}`,
          `64:ff9b::${v4}`,
          `2002:${hex(a!, b!)}:${hex(c!, d!)}::1`,
          `2001:0:4136:e378:8000:63bf:${(~((a! << 8) | b!) & 0xffff).toString(16)}:${(~((c! << 8) | d!) & 0xffff).toString(16)}`,
        ];
        for (const policy of [open, closed]) {
          const expected = refusalOf(v4, policy) === null;
          for (const form of forms) expect(refusalOf(form, policy) === null, `${form} (${v4})`).toBe(expected);
        }
      }),
      { seed: FUZZ_SEED, numRuns: 3_000 },
    );
    expect(watch.stop()).toBeLessThan(MAX_EVENT_LOOP_BLOCK_MS);
  });

  it('reaches public addresses, also through NAT64 and 6to4', () => {
    for (const address of ['64:ff9b::808:808', '2002:808:808::1', '::ffff:8.8.8.8']) {
      expect(refusalOf(address, closed), address).toBeNull();
    }
  });

  it('never reaches the platform\'s own back ends, by name or by any address of the same host', async () => {
    const policy = { allowPrivateNetworks: true, internalEndpoints: [{ name: 'EXTERNAL_SPARQL_ENDPOINT', host: 'localhost', port: 8890 }] };
    for (const url of ['http://localhost:8890/sparql', 'http://127.0.0.1:8890/', 'http://[::1]:8890/', 'http://127.0.0.2:8890/', 'http://LOCALHOST:8890/']) {
      await expect(assertReachable(new URL(url), policy), url).rejects.toThrow(/EXTERNAL_SPARQL_ENDPOINT/);
    }
    await expect(assertReachable(new URL('http://127.0.0.1:8891/'), policy)).resolves.toBeUndefined();
  });

  it('reaches public addresses', () => {
    for (const address of ['93.184.216.34', '8.8.8.8', '2606:4700::1111', '172.32.0.1']) {
      expect(refusalOf(address, closed), address).toBeNull();
    }
  });

  it('checks literal hosts without resolving, and refuses other schemes', async () => {
    await expect(assertReachable(new URL('http://169.254.169.254/latest/meta-data/'), open)).rejects.toThrow(/Refused http:\/\/169\.254\.169\.254/);
    await expect(assertReachable(new URL('http://[::1]:8080/'), closed)).rejects.toThrow(/private-network/);
    await expect(assertReachable(new URL('http://127.0.0.1:9/'), open)).resolves.toBeUndefined();
    await expect(assertReachable(new URL('file:///etc/passwd'), open)).rejects.toThrow(/http or https/);
    for (const host of ['[::]', '[0::]', '[::0]', '0.0.0.0', '[::ffff:127.0.0.1]', '[::ffff:7f00:1]']) {
      await expect(assertReachable(new URL(`http://${host}:8080/`), closed), host).rejects.toThrow(/^Refused http:\/\//);
    }
  });

  it('resolves names before deciding', async () => {
    await expect(assertReachable(new URL('http://localhost:1/'), closed)).rejects.toThrow(/private-network/);
  });
});
