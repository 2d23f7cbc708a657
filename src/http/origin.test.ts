import { describe, expect, it } from 'vitest';
import { createOriginPolicy } from './origin.js';

describe('Host/Origin policy', () => {
  const loopback = createOriginPolicy({
    bindHost: '127.0.0.1',
    allowedHosts: [],
    allowedOrigins: [],
  });

  it('lets loopback names and requests without Origin through on a loopback bind', () => {
    expect(loopback.check('127.0.0.1:8080', undefined)).toBeNull();
    expect(loopback.check('localhost:8080', 'http://localhost:3000')).toBeNull();
    expect(loopback.check('[::1]:8080', 'http://[::1]:8080')).toBeNull();
  });

  it('refuses a foreign Host or Origin (DNS rebinding)', () => {
    expect(loopback.check('evil.example.com', 'http://evil.example.com')).toMatch(/Host/);
    expect(loopback.check('127.0.0.1:8080', 'http://evil.example.com')).toMatch(/Origin/);
    expect(loopback.check('127.0.0.1:8080', 'not a url')).toMatch(/Origin/);
  });

  it('takes configured hosts and origins, and same-origin requests, on a public bind', () => {
    const open = createOriginPolicy({
      bindHost: '0.0.0.0',
      allowedHosts: [],
      allowedOrigins: ['https://app.example.com'],
    });
    expect(open.check('mcp.example.com', undefined)).toBeNull();
    expect(open.check('mcp.example.com', 'https://app.example.com')).toBeNull();
    expect(open.check('mcp.example.com', 'https://mcp.example.com')).toBeNull();
    expect(open.check('mcp.example.com', 'https://other.example.com')).toMatch(/allowedOrigins/);
    const listed = createOriginPolicy({
      bindHost: '127.0.0.1',
      allowedHosts: ['mcp.internal'],
      allowedOrigins: ['*'],
    });
    expect(listed.check('mcp.internal:8080', 'https://anything.example')).toBeNull();
  });
});
