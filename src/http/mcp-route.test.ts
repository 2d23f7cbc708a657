// The MCP endpoint's shape, as ARCHITECTURE.md ("The path of one request") describes it: every
// message reaches the dispatcher through the transport seam (mcp/inbound.ts deliver(), which
// stdio uses too), and the route is a list of stages, each a small file with one job.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const httpDir = import.meta.dirname;
const sources = (readdirSync(httpDir, { recursive: true }) as string[])
  .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'))
  .map((f) => ({ file: f, text: readFileSync(join(httpDir, f), 'utf8') }));
const endpointFiles = sources.filter(
  ({ file }) => file === 'mcp-route.ts' || file.startsWith('mcp/'),
);

describe('the MCP endpoint over HTTP', () => {
  it('hands every message to the transport seam, never to the dispatcher directly', () => {
    const direct = sources
      .filter(({ text }) => /\.handle(Request|Notification)\(/.test(text))
      .map(({ file }) => file);
    expect(direct).toEqual([]);
  });

  it('is a route of stages, no file over 300 lines', () => {
    const long = endpointFiles
      .map(({ file, text }) => ({ file, lines: text.split('\n').length - 1 }))
      .filter(({ lines }) => lines > 300);
    expect(long).toEqual([]);
    expect(endpointFiles.map(({ file }) => file)).toContain('mcp/place.ts');
  });
});
