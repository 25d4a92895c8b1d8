/** Which destinations requests on a user's behalf may reach (pure address rules). */
import { describe, expect, it } from 'vitest';
import { assertReachable, refusalOf } from '../../functions/adapters/common/outbound-guard.js';

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
  });

  it('resolves names before deciding', async () => {
    await expect(assertReachable(new URL('http://localhost:1/'), closed)).rejects.toThrow(/private-network/);
  });
});
