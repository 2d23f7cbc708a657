// Which addresses pgmcp's own fetches may reach (the addresses here are only classified; no
// traffic goes anywhere: test/integration/oauth-fetch-guard.test.ts fetches over loopback).
import { describe, expect, it } from 'vitest';
import { configSchema } from '../../config/schema.js';
import { createFetchPolicy, fetchPolicyFor, specialRange } from './fetch-guard.js';

describe('specialRange', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['10.0.0.1', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.0.1', 'private'],
    ['169.254.169.254', 'link-local (cloud metadata)'],
    ['169.254.0.1', 'link-local (cloud metadata)'],
    ['0.0.0.0', '"this network"'],
    ['0.1.2.3', '"this network"'],
    ['100.64.0.1', 'shared (carrier-grade NAT)'],
    ['100.127.255.255', 'shared (carrier-grade NAT)'],
    ['224.0.0.1', 'multicast'],
    ['255.255.255.255', 'reserved'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fc00::1', 'unique-local'],
    ['fd12:3456:789a::1', 'unique-local'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['febf:ffff::1', 'link-local'],
    ['ff02::1', 'multicast'],
    ['::ffff:127.0.0.1', 'loopback (IPv4 inside IPv6)'],
    ['::ffff:7f00:2', 'loopback (IPv4 inside IPv6)'],
    ['::ffff:169.254.169.254', 'link-local (cloud metadata) (IPv4 inside IPv6)'],
    ['::ffff:10.1.2.3', 'private (IPv4 inside IPv6)'],
    ['::127.0.0.1', 'loopback (IPv4 inside IPv6)'],
    ['64:ff9b::a9fe:a9fe', 'link-local (cloud metadata) (IPv4 inside IPv6)'],
    ['2002:c0a8:0101::1', 'private (IPv4 inside IPv6)'],
    // SIIT's IPv4-translated form carries the IPv4 address as well.
    ['::ffff:0:127.0.0.1', 'loopback (IPv4 inside IPv6)'],
    ['::ffff:0:a9fe:a9fe', 'link-local (cloud metadata) (IPv4 inside IPv6)'],
    ['::ffff:0:10.0.0.1', 'private (IPv4 inside IPv6)'],
    // Local-use NAT64 translates to whatever the operator's network has behind it.
    ['64:ff9b:1::a9fe:a9fe', 'local-use NAT64'],
    ['64:ff9b:1::808:808', 'local-use NAT64'],
    ['64:ff9b:1:ffff::1', 'local-use NAT64'],
    // Teredo obfuscates the IPv4 address it carries: the whole prefix is refused.
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'Teredo'],
    ['2001::1', 'Teredo'],
    ['2001:2::1', 'IETF protocol assignment'],
    ['2001:10::1', 'IETF protocol assignment'],
    ['100::1', 'discard-only'],
    ['100::ffff:ffff:ffff:ffff', 'discard-only'],
    ['100:0:0:1::1', 'dummy'],
    ['2001:db8::1', 'documentation'],
    ['2001:db8:ffff::1', 'documentation'],
    ['3fff::1', 'documentation'],
    ['5f00::1', 'segment routing (SRv6)'],
    ['::2:3:4', 'reserved'],
    ['64:ff9b:0:0:1::1', 'reserved'],
    ['4000::1', 'reserved'],
    ['e000::1', 'reserved'],
    ['192.0.2.1', 'documentation'],
    ['198.51.100.1', 'documentation'],
    ['203.0.113.1', 'documentation'],
    ['192.88.99.1', 'special-purpose'],
    ['[::1]', 'loopback'],
    ['not-an-address', 'not an IP address'],
    ['1::2::3', 'not an IP address'],
    ['256.1.1.1', 'not an IP address'],
  ])('%s is %s', (address, range) => {
    expect(specialRange(address)).toBe(range);
  });

  it.each([
    '8.8.8.8',
    '1.1.1.1',
    '100.63.255.255',
    '100.128.0.1',
    '172.15.255.255',
    '172.32.0.1',
    '169.253.255.255',
    '2606:4700:4700::1111',
    '::ffff:8.8.8.8',
    '2002:0808:0808::1',
    '::ffff:0:8.8.8.8',
    '64:ff9b::808:808',
    '2001:200::1',
    '2001:4860:4860::8888',
    '2a00:1450:4001::1',
    '3ffe::1',
    '3fff:1000::1',
  ])('%s is an ordinary public address', (address) => {
    expect(specialRange(address)).toBeNull();
  });
});

/** A URL: as given when it has a scheme, else https://<host>/doc.json. */
const at = (url: string): URL => new URL(url.includes('://') ? url : `https://${url}/doc.json`);

describe('a fetch policy', () => {
  it('refuses special addresses and allows public ones by default', () => {
    const policy = createFetchPolicy([]);
    expect(policy.refusal(at('localhost'), '127.0.0.1')).toBe('loopback');
    expect(policy.refusal(at('metadata.internal'), '169.254.169.254')).toMatch(/link-local/);
    expect(policy.refusal(at('example.com'), '93.184.215.14')).toBeNull();
  });

  it('allows listed names whatever they resolve to, and listed addresses and ranges', () => {
    const policy = createFetchPolicy([
      'IdP.Internal',
      '127.0.0.2',
      '10.0.0.0/8',
      'fd00::/8',
      '[::1]',
    ]);
    expect(policy.refusal(at('idp.internal'), '192.168.1.1')).toBeNull();
    expect(policy.refusal(at('IDP.INTERNAL.'), '192.168.1.1')).toBeNull();
    expect(policy.refusal(at('other.internal'), '127.0.0.2')).toBeNull();
    expect(policy.refusal(at('other.internal'), '127.0.0.3')).toBe('loopback');
    expect(policy.refusal(at('x'), '10.200.0.1')).toBeNull();
    expect(policy.refusal(at('x'), '172.16.0.1')).toBe('private');
    expect(policy.refusal(at('x'), 'fd00::5')).toBeNull();
    expect(policy.refusal(at('x'), 'fe80::5')).toBe('link-local');
    expect(policy.refusal(at('x'), '::1')).toBeNull();
  });

  it("allows the configured issuers' and introspection endpoint's origins, and no other port or scheme", () => {
    const settings = configSchema.parse({
      auth: {
        oauth: {
          authorizationServers: ['http://127.0.0.1:9000/realms/a', 'https://idp.corp:8443/x'],
          introspection: { url: 'http://localhost:9001/introspect' },
          server: { issuer: 'https://as.internal' },
        },
      },
    }).auth.oauth;
    const policy = fetchPolicyFor(settings);
    expect(policy.refusal(at('http://127.0.0.1:9000/jwks'), '127.0.0.1')).toBeNull();
    expect(policy.refusal(at('http://localhost:9001/other'), '::1')).toBeNull();
    expect(policy.refusal(at('http://LOCALHOST.:9001/'), '127.0.0.1')).toBeNull();
    expect(policy.refusal(at('https://as.internal/jwks'), '10.1.1.1')).toBeNull();
    expect(policy.refusal(at('https://as.internal:443/jwks'), '10.1.1.1')).toBeNull();
    expect(policy.refusal(at('https://idp.corp:8443/keys'), '10.1.1.1')).toBeNull();
    // Another port, or another scheme, on a configured host is an address like any other.
    expect(policy.refusal(at('http://127.0.0.1:9001/'), '127.0.0.1')).toBe('loopback');
    expect(policy.refusal(at('https://127.0.0.1:9000/'), '127.0.0.1')).toBe('loopback');
    expect(policy.refusal(at('http://localhost:22/'), '127.0.0.1')).toBe('loopback');
    expect(policy.refusal(at('https://idp.corp/x'), '10.1.1.1')).toBe('private');
    expect(policy.refusal(at('https://idp.corp:22/x'), '10.1.1.1')).toBe('private');
    expect(policy.refusal(at('http://idp.corp:8443/x'), '10.1.1.1')).toBe('private');
    expect(policy.refusal(at('https://as.internal:8443/jwks'), '10.1.1.1')).toBe('private');
    expect(policy.refusal(at('http://as.internal/jwks'), '10.1.1.1')).toBe('private');
    expect(policy.refusal(at('127.0.0.2'), '127.0.0.2')).toBe('loopback');
    expect(policy.refusal(at('evil.example'), '127.0.0.1')).toBe('loopback');
    // A public address needs no allowance, on any port.
    expect(policy.refusal(at('https://idp.corp:22/x'), '93.184.215.14')).toBeNull();
  });

  it('allows a host listed in allowedFetchHosts on every port', () => {
    const policy = createFetchPolicy(['idp.corp', '127.0.0.2']);
    expect(policy.refusal(at('https://idp.corp:22/x'), '10.1.1.1')).toBeNull();
    expect(policy.refusal(at('http://idp.corp/x'), '10.1.1.1')).toBeNull();
    expect(policy.refusal(at('http://127.0.0.2:1/x'), '127.0.0.2')).toBeNull();
  });

  it('is configured with names, addresses and CIDR ranges only', () => {
    const parse = (allowedFetchHosts: unknown) =>
      configSchema.safeParse({ auth: { oauth: { allowedFetchHosts } } }).success;
    expect(parse(['idp.internal', '10.0.0.0/8', '127.0.0.2', '::1', '[::1]', 'fd00::/8'])).toBe(
      true,
    );
    for (const bad of ['http://idp.internal', 'idp.internal:8080', '10.0.0.0/33', '', 'a b', '*']) {
      expect(parse([bad]), bad).toBe(false);
    }
  });
});
