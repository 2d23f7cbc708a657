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
    '2001:db8::1',
  ])('%s is an ordinary public address', (address) => {
    expect(specialRange(address)).toBeNull();
  });
});

describe('a fetch policy', () => {
  it('refuses special addresses and allows public ones by default', () => {
    const policy = createFetchPolicy([]);
    expect(policy.refusal('localhost', '127.0.0.1')).toBe('loopback');
    expect(policy.refusal('metadata.internal', '169.254.169.254')).toMatch(/link-local/);
    expect(policy.refusal('example.com', '93.184.215.14')).toBeNull();
  });

  it('allows listed names whatever they resolve to, and listed addresses and ranges', () => {
    const policy = createFetchPolicy([
      'IdP.Internal',
      '127.0.0.2',
      '10.0.0.0/8',
      'fd00::/8',
      '[::1]',
    ]);
    expect(policy.refusal('idp.internal', '192.168.1.1')).toBeNull();
    expect(policy.refusal('IDP.INTERNAL.', '192.168.1.1')).toBeNull();
    expect(policy.refusal('other.internal', '127.0.0.2')).toBeNull();
    expect(policy.refusal('other.internal', '127.0.0.3')).toBe('loopback');
    expect(policy.refusal('x', '10.200.0.1')).toBeNull();
    expect(policy.refusal('x', '172.16.0.1')).toBe('private');
    expect(policy.refusal('x', 'fd00::5')).toBeNull();
    expect(policy.refusal('x', 'fe80::5')).toBe('link-local');
    expect(policy.refusal('x', '::1')).toBeNull();
  });

  it("allows the configured issuers' and introspection endpoint's hosts, and no others", () => {
    const settings = configSchema.parse({
      auth: {
        oauth: {
          authorizationServers: ['http://127.0.0.1:9000/realms/a'],
          introspection: { url: 'http://localhost:9001/introspect' },
          server: { issuer: 'https://as.internal' },
        },
      },
    }).auth.oauth;
    const policy = fetchPolicyFor(settings);
    expect(policy.refusal('127.0.0.1', '127.0.0.1')).toBeNull();
    expect(policy.refusal('localhost', '::1')).toBeNull();
    expect(policy.refusal('as.internal', '10.1.1.1')).toBeNull();
    expect(policy.refusal('127.0.0.2', '127.0.0.2')).toBe('loopback');
    expect(policy.refusal('evil.example', '127.0.0.1')).toBe('loopback');
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
