/**
 * Where the platform may send requests on a user's behalf (URL imports, Load from URL, HTTP
 * request tasks, SHACL shapes). Addresses are classified with ipaddr.js: unspecified, link-local
 * (cloud metadata), multicast, broadcast and reserved addresses are never reachable, in any
 * notation and also when embedded in another address (IPv4-mapped, NAT64, 6to4, Teredo);
 * loopback and private networks only when the instance allows them (the embedded platform does by
 * default, since a laptop's data is often on localhost; deployments do not). The platform's own
 * back ends (the external SPARQL store, AWS endpoints) are never reachable, so a flow cannot go
 * around access control. The check runs where the socket is opened, on the addresses actually
 * resolved and connected to, so DNS rebinding is caught; every redirect is checked again.
 */
import { lookup, type LookupAddress } from 'node:dns';
import { lookup as lookupAll } from 'node:dns/promises';
import { isIP, type LookupFunction, type Socket } from 'node:net';
import { networkInterfaces } from 'node:os';
import ipaddr from 'ipaddr.js';
import { Agent, buildConnector, fetch as undiciFetch, type RequestInit as UndiciRequestInit } from 'undici';

/** A back end of the platform itself, named for the message (never its URL: it may hold credentials). */
export interface InternalEndpoint {
  name: string;
  host: string;
  port: number;
}

export interface OutboundPolicy {
  allowPrivateNetworks: boolean;
  /** Never reachable, even where private networks are allowed. */
  internalEndpoints?: readonly InternalEndpoint[];
}

/** A destination the policy refuses: the message says which and why. */
export class OutboundRefusedError extends Error {
  override name = 'OutboundRefusedError';
  /** Why, without the destination (the connector names the origin). */
  constructor(message: string, readonly reason?: string) {
    super(message);
  }
}

type Reach = 'public' | 'private' | 'never';

const REACH_OF_RANGE: Record<string, Reach> = {
  unicast: 'public',
  loopback: 'private',
  private: 'private',
  carrierGradeNat: 'private',
  uniqueLocal: 'private',
};

/** Cloud metadata services inside otherwise private ranges. */
const CLOUD_METADATA = new Set(['fd00:ec2::254', '100.100.100.200'].map((a) => ipaddr.parse(a).toNormalizedString()));

const NAT64_WELL_KNOWN = ipaddr.parseCIDR('64:ff9b::/96');
/** Deprecated IPv4-compatible IPv6 (::a.b.c.d); ipaddr.js calls these unicast. */
const IPV4_COMPATIBLE = ipaddr.parseCIDR('::/96');

const v4Of = (hi: number, lo: number) => ipaddr.fromByteArray([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]) as ipaddr.IPv4;

/** The IPv4 address an IPv6 address carries (translation and tunnel forms), if any. */
function embeddedV4(address: ipaddr.IPv6, range: string): ipaddr.IPv4 | 'unknown' | undefined {
  const p = address.parts;
  switch (range) {
    case 'ipv4Mapped':
    case 'rfc6145':
      return v4Of(p[6]!, p[7]!);
    case 'rfc6052':
      // The local-use NAT64 prefix (64:ff9b:1::/48) places the IPv4 part by its own prefix length.
      return address.match(NAT64_WELL_KNOWN) ? v4Of(p[6]!, p[7]!) : 'unknown';
    case '6to4':
      return v4Of(p[1]!, p[2]!);
    case 'teredo':
      return v4Of(~p[6]! & 0xffff, ~p[7]! & 0xffff); // the client address, obfuscated
    default:
      return range === 'unicast' && address.match(IPV4_COMPATIBLE) ? v4Of(p[6]!, p[7]!) : undefined;
  }
}

const LABEL_OF_RANGE: Record<string, string> = { linkLocal: 'link-local', carrierGradeNat: 'carrier-grade NAT', uniqueLocal: 'unique local' };

interface Classified {
  reach: Reach;
  /** The range that decided, readable. */
  label: string;
  /** The IPv4 address an IPv6 form carries, and that form. */
  carried?: { address: string; form: string };
}

/** How far an address may be reached, and the range that decided it. */
function classify(text: string): Classified {
  if (!ipaddr.isValid(text)) return { reach: 'never', label: 'unparsable' };
  const address = ipaddr.process(text);
  if (CLOUD_METADATA.has(address.toNormalizedString())) return { reach: 'never', label: 'cloud metadata' };
  const range = address.range();
  if (address.kind() === 'ipv6') {
    const inner = embeddedV4(address as ipaddr.IPv6, range);
    if (inner === 'unknown') return { reach: 'never', label: 'local-use NAT64' };
    if (inner) return { ...classify(inner.toString()), carried: { address: inner.toString(), form: range } };
  }
  return { reach: REACH_OF_RANGE[range] ?? 'never', label: LABEL_OF_RANGE[range] ?? range };
}

/** Why an address may not be reached, or null when it may. Pure. */
export function refusalOf(address: string, policy: OutboundPolicy): string | null {
  const { reach, label, carried } = classify(address);
  if (label === 'unparsable') return `"${address}" is not an IP address`;
  const subject = carried ? `${address} carries ${carried.address} (${carried.form}), which` : address;
  if (reach === 'never') {
    const example = label === 'link-local' ? ' (such as a cloud metadata service)' : '';
    return `${subject} is ${/^[aeiou]/i.test(label) ? 'an' : 'a'} ${label} address${example}, which the platform never calls`;
  }
  if (reach === 'private' && !policy.allowPrivateNetworks) return `${subject} is a loopback or private-network address (${label}), which this instance does not call`;
  return null;
}

const stripBrackets = (host: string) => host.replace(/^\[|\]$/g, '');
const defaultPort = (protocol: string) => (protocol === 'https:' ? 443 : 80);

/** Every address of this machine: a back end listening on any of them is the same back end. */
function onThisMachine(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  const normalized = ipaddr.process(address);
  if (['loopback', 'unspecified'].includes(normalized.range())) return true;
  return Object.values(networkInterfaces()).some((list) =>
    (list ?? []).some((i) => ipaddr.isValid(i.address) && ipaddr.process(i.address).toNormalizedString() === normalized.toNormalizedString()),
  );
}

const sameAddress = (a: string, b: string) =>
  ipaddr.isValid(a) && ipaddr.isValid(b) && ipaddr.process(a).toNormalizedString() === ipaddr.process(b).toNormalizedString();

/** The internal endpoint a host (name or address) and port lead to, if any. */
async function internalEndpointAt(host: string, port: number, policy: OutboundPolicy): Promise<InternalEndpoint | undefined> {
  for (const endpoint of policy.internalEndpoints ?? []) {
    if (endpoint.port !== port) continue;
    if (endpoint.host.toLowerCase() === host.toLowerCase()) return endpoint;
    if (!isIP(host)) continue;
    const addresses = isIP(endpoint.host)
      ? [endpoint.host]
      : (await lookupAll(endpoint.host, { all: true }).catch(() => [] as LookupAddress[])).map((a) => a.address);
    if (addresses.some((a) => sameAddress(a, host) || (onThisMachine(a) && onThisMachine(host)))) return endpoint;
  }
  return undefined;
}

const internalRefusal = (endpoint: InternalEndpoint) => `it is the platform's own back end (${endpoint.name}), which requests on a user's behalf never reach`;

/** Why a host and port may not be reached, or null; resolves names only when `resolve` is set. */
async function refusalOfHost(host: string, port: number, policy: OutboundPolicy, resolve: boolean): Promise<string | null> {
  const internal = await internalEndpointAt(host, port, policy);
  if (internal) return internalRefusal(internal);
  if (isIP(host)) return refusalOf(host, policy);
  if (!resolve) return null;
  for (const { address } of await lookupAll(host, { all: true, verbatim: true }).catch(() => [] as LookupAddress[])) {
    const why = refusalOf(address, policy);
    if (why) return why;
    const internalAddress = await internalEndpointAt(address, port, policy);
    if (internalAddress) return internalRefusal(internalAddress);
  }
  return null;
}

/**
 * Throws OutboundRefusedError unless the URL's scheme, host and port may be reached; names are
 * resolved unless `resolve` is false (the connection checks the addresses it uses either way).
 */
export async function assertReachable(url: URL, policy: OutboundPolicy, { resolve = true } = {}): Promise<void> {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new OutboundRefusedError(`${url.protocol} URLs are not fetched; use http or https.`);
  const why = await refusalOfHost(stripBrackets(url.hostname), Number(url.port) || defaultPort(url.protocol), policy, resolve);
  if (why) throw new OutboundRefusedError(`Refused ${url.origin}: ${why}.`);
}

/** A DNS lookup that fails when any address a name resolves to is refused (checked as the socket connects). */
function guardedLookup(policy: OutboundPolicy): LookupFunction {
  return (hostname, options, callback) => {
    lookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, '', 0);
      for (const { address } of addresses) {
        const why = refusalOf(address, policy);
        if (why) return callback(new OutboundRefusedError(`Refused ${hostname}: ${why}.`, why), '', 0);
      }
      if (addresses.length === 0) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '', 0);
      if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
      return callback(null, addresses[0]!.address, addresses[0]!.family);
    });
  };
}

/**
 * undici's connector with the policy applied: literal addresses before connecting (Node does not
 * look them up), resolved names through the guarded lookup, and the peer actually connected to
 * (address and port, against the ranges and the platform's own back ends) before a byte is sent.
 */
function guardedConnector(policy: OutboundPolicy): buildConnector.connector {
  const connect = buildConnector({ lookup: guardedLookup(policy) });
  return (options, callback) => {
    const host = stripBrackets(options.hostname);
    const port = Number(options.port) || defaultPort(options.protocol);
    const origin = `${options.protocol}//${options.hostname}${options.port ? `:${options.port}` : ''}`;
    const refuse = (why: string) => callback(new OutboundRefusedError(`Refused ${origin}: ${why}.`), null);
    void refusalOfHost(host, port, policy, false).then((before) => {
      if (before) return refuse(before);
      connect(options, (error, socket) => {
        if (error instanceof OutboundRefusedError && error.reason) return refuse(error.reason);
        if (error || !socket) return callback(error ?? new Error('no connection'), null);
        const peer = (socket as Socket).remoteAddress;
        if (!peer) {
          // Fail closed: a connection whose peer cannot be told is not one the policy allowed.
          socket.destroy();
          return refuse('the address connected to cannot be determined');
        }
        const peerPort = (socket as Socket).remotePort ?? port;
        void refusalOfHost(peer, peerPort, policy, false).then(
          (after) => {
            if (!after) return callback(null, socket);
            socket.destroy();
            refuse(after);
          },
          (e: Error) => {
            socket.destroy();
            callback(e, null);
          },
        ).catch((e: unknown) => {
          socket.destroy();
          callback(e as Error, null);
        });
      });
    }, (e: Error) => callback(e, null)).catch((e: unknown) => {
      // A throw inside the handlers above fails this connection, never an unhandled rejection.
      callback(e as Error, null);
    });
  };
}

const agents = new WeakMap<OutboundPolicy, Agent>();
const agentFor = (policy: OutboundPolicy) => {
  let agent = agents.get(policy);
  if (!agent) agents.set(policy, (agent = new Agent({ connect: guardedConnector(policy) })));
  return agent;
};

const MAX_REDIRECTS = 5;

/** fetch() that checks the destination and every redirect against the policy, at connect time. */
export async function guardedFetch(url: string, init: RequestInit, policy: OutboundPolicy): Promise<Response> {
  const dispatcher = agentFor(policy);
  let current = new URL(url);
  let request: RequestInit = { ...init, redirect: 'manual' };
  for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
    await assertReachable(current, policy, { resolve: false });
    let response: Response;
    try {
      response = (await undiciFetch(current, { ...(request as UndiciRequestInit), dispatcher })) as unknown as Response;
    } catch (e) {
      // undici wraps connector errors in "fetch failed": surface the refusal itself.
      const cause = (e as { cause?: unknown }).cause;
      throw cause instanceof OutboundRefusedError ? cause : e;
    }
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
