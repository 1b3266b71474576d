import { lookup as dnsLookup, LookupAddress } from 'node:dns';
import { BlockList, isIP, LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';

/** Loopback, private, shared, link-local (cloud metadata included), multicast and reserved ranges. */
const FORBIDDEN = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  FORBIDDEN.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 96], // unspecified, loopback and IPv4-compatible (::a.b.c.d, deprecated): no webhook has one
  ['::ffff:0:0:0', 96], // IPv4-translated (SIIT)
  ['64:ff9b:1::', 48], // local-use NAT64: reaches whatever IPv4 the operator's translator maps it to
  ['100::', 64],
  ['2001::', 32], // Teredo: the IPv4 behind it is obfuscated, and tunnels reach past the network's edge
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8],
] as const) {
  FORBIDDEN.addSubnet(network, prefix, 'ipv6');
}

/**
 * IPv6 ranges that carry an IPv4 address, and the byte it starts at: such an address is judged as
 * that IPv4 address, since a translator or a 6to4 relay connects to it.
 */
const EMBEDDING_IPV4: ReadonlyArray<{ range: BlockList; at: number }> = (
  [
    ['::ffff:0:0', 96, 12], // IPv4-mapped
    ['64:ff9b::', 96, 12], // the well-known NAT64 prefix (RFC 6052)
    ['2002::', 16, 2], // 6to4 (RFC 3056)
  ] as const
).map(([network, prefix, at]) => {
  const range = new BlockList();
  range.addSubnet(network, prefix, 'ipv6');
  return { range, at };
});

/** Whether a webhook may connect to this address (an address that embeds an IPv4 address is judged as it). */
export function isForbiddenAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return true;
  if (family === 4) return FORBIDDEN.check(address, 'ipv4');
  const embedding = EMBEDDING_IPV4.find(({ range }) => range.check(address, 'ipv6'));
  if (embedding) {
    // ipaddr.js reads the address's bytes (any of IPv6's spellings); BlockList judges them.
    const bytes = ipaddr.IPv6.parse(address).toByteArray();
    return FORBIDDEN.check(bytes.slice(embedding.at, embedding.at + 4).join('.'), 'ipv4');
  }
  return FORBIDDEN.check(address, 'ipv6');
}

/** Why a URL cannot be an endpoint, or undefined when it can (the address is checked again at each connect). */
export function urlProblem(url: string, allowPrivate: boolean): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'url must be an absolute URL';
  }
  if (parsed.username || parsed.password) return 'url must not carry credentials';
  if (parsed.protocol !== 'https:' && !(allowPrivate && parsed.protocol === 'http:')) {
    return allowPrivate ? 'url must be http:// or https://' : 'url must be https://';
  }
  const host = parsed.hostname.replace(/^\[|\]$/g, '');
  if (!allowPrivate && isIP(host) !== 0 && isForbiddenAddress(host)) {
    return 'url must not name a loopback, private, link-local or metadata address (WEBHOOK_ALLOW_PRIVATE_URLS=true allows them, for development)';
  }
  return undefined;
}

/**
 * A DNS lookup for the HTTP agent that refuses forbidden addresses: the check is made on the
 * addresses the socket will connect to, so that a name cannot resolve to a public address when
 * registered and to a private one when called (DNS rebinding).
 */
export const guardedLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
    if (error) return callback(error, '', 0);
    const forbidden = addresses.find((a) => isForbiddenAddress(a.address));
    if (forbidden || addresses.length === 0) {
      const refusal = Object.assign(new Error(`${hostname} resolves to a forbidden address`), { code: 'EFORBIDDEN' });
      return callback(refusal, '', 0);
    }
    if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
    callback(null, addresses[0].address, addresses[0].family);
  });
};
