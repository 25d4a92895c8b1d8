/**
 * Where the platform may send requests on a user's behalf (URL imports, Load from URL, HTTP
 * request tasks, SHACL shapes). Cloud metadata and other link-local addresses are never reachable;
 * loopback and private networks only when the instance allows them (the embedded platform does by
 * default, since a laptop's data is often on localhost; deployments do not). Every redirect is
 * checked again. A name resolving to a public address at check time and another at connect time
 * (DNS rebinding) is not caught here.
 */
import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

export interface OutboundPolicy {
  allowPrivateNetworks: boolean;
}

/** A destination the policy refuses: the message says which and why. */
export class OutboundRefusedError extends Error {
  override name = 'OutboundRefusedError';
}

const NEVER = new BlockList();
NEVER.addSubnet('169.254.0.0', 16, 'ipv4'); // link-local, cloud metadata
NEVER.addSubnet('0.0.0.0', 8, 'ipv4');
NEVER.addSubnet('fe80::', 10, 'ipv6');
NEVER.addAddress('fd00:ec2::254', 'ipv6'); // EC2 metadata over IPv6

const PRIVATE = new BlockList();
PRIVATE.addSubnet('127.0.0.0', 8, 'ipv4');
PRIVATE.addSubnet('10.0.0.0', 8, 'ipv4');
PRIVATE.addSubnet('172.16.0.0', 12, 'ipv4');
PRIVATE.addSubnet('192.168.0.0', 16, 'ipv4');
PRIVATE.addSubnet('100.64.0.0', 10, 'ipv4');
PRIVATE.addAddress('::1', 'ipv6');
PRIVATE.addSubnet('fc00::', 7, 'ipv6');

/** Why an address may not be reached, or null when it may. Pure. */
export function refusalOf(address: string, policy: OutboundPolicy): string | null {
  const family: 'ipv4' | 'ipv6' = isIP(address) === 6 ? 'ipv6' : 'ipv4';
  // IPv4-mapped IPv6 (::ffff:169.254.169.254) is checked as the IPv4 address it is.
  const mapped = family === 'ipv6' ? /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1] : undefined;
  const [a, f]: [string, 'ipv4' | 'ipv6'] = mapped ? [mapped, 'ipv4'] : [address, family];
  if (NEVER.check(a, f)) return `${address} is a link-local address (such as a cloud metadata service), which the platform never calls`;
  if (!policy.allowPrivateNetworks && PRIVATE.check(a, f)) return `${address} is a loopback or private-network address, which this instance does not call`;
  return null;
}

/** Throws OutboundRefusedError unless every address the URL's host resolves to may be reached. */
export async function assertReachable(url: URL, policy: OutboundPolicy): Promise<void> {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new OutboundRefusedError(`${url.protocol} URLs are not fetched; use http or https.`);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const addresses = isIP(host) ? [host] : (await lookup(host, { all: true, verbatim: true }).catch(() => [] as { address: string }[])).map((a) => a.address);
  for (const address of addresses) {
    const why = refusalOf(address, policy);
    if (why) throw new OutboundRefusedError(`Refused ${url.origin}: ${why}.`);
  }
}

const MAX_REDIRECTS = 5;

/** fetch() that checks the destination and every redirect against the policy. */
export async function guardedFetch(url: string, init: RequestInit, policy: OutboundPolicy): Promise<Response> {
  let current = new URL(url);
  let request: RequestInit = { ...init, redirect: 'manual' };
  for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
    await assertReachable(current, policy);
    const response = await fetch(current, request);
    const location = response.headers.get('location');
    if (response.status < 300 || response.status >= 400 || !location) return response;
    await response.body?.cancel().catch(() => {});
    current = new URL(location, current);
    // As browsers do: 303 (and 301/302 after a POST) continue as GET without a body.
    if (response.status === 303 || ((response.status === 301 || response.status === 302) && request.method && request.method !== 'GET' && request.method !== 'HEAD')) {
      const { body: _body, ...rest } = request;
      request = { ...rest, method: 'GET' };
    }
  }
  throw new OutboundRefusedError(`${url} redirected more than ${MAX_REDIRECTS} times.`);
}
