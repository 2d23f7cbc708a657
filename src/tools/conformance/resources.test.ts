import { describe, expect, it } from 'vitest';
import { createFakeContext } from '../../testing/fake-context.js';
import { TINY_PNG_BASE64 } from './media.js';
import { dataTemplate, staticBinary, staticText, watched } from './resources.js';

describe('conformance resources', () => {
  it('test://static-text reads as the fixed plain text', async () => {
    const { ctx } = createFakeContext();
    expect(await staticText.read(ctx)).toEqual({
      contents: [
        {
          uri: 'test://static-text',
          mimeType: 'text/plain',
          text: 'This is the content of the static text resource.',
        },
      ],
    });
  });

  it('test://static-binary reads as a PNG blob', async () => {
    const { ctx } = createFakeContext();
    expect(await staticBinary.read(ctx)).toEqual({
      contents: [{ uri: 'test://static-binary', mimeType: 'image/png', blob: TINY_PNG_BASE64 }],
    });
  });

  it('test://watched-resource exists and has content', async () => {
    const { ctx } = createFakeContext();
    const { contents } = await watched.read(ctx);
    expect(contents).toHaveLength(1);
    expect(contents[0]).toMatchObject({ uri: 'test://watched-resource', mimeType: 'text/plain' });
  });

  it('every listed resource has a uri, name, description and mimeType', () => {
    for (const r of [staticText, staticBinary, watched]) {
      expect(
        [r.uri, r.name, r.description, r.mimeType].every(
          (v) => typeof v === 'string' && v.length > 0,
        ),
      ).toBe(true);
    }
  });
});

describe('test://template/{id}/data', () => {
  it('matches its URIs and nothing else', () => {
    expect(dataTemplate.match('test://template/123/data')).toEqual({ id: '123' });
    expect(dataTemplate.match('test://template/123/other')).toBeNull();
    expect(dataTemplate.match('test://nonexistent-resource-for-conformance-testing')).toBeNull();
  });

  it('substitutes the id into exactly the expected JSON', async () => {
    const { ctx } = createFakeContext();
    const uri = 'test://template/123/data';
    expect(await dataTemplate.read(uri, { id: '123' }, ctx)).toEqual({
      contents: [
        {
          uri,
          mimeType: 'application/json',
          text: '{"id":"123","templateTest":true,"data":"Data for ID: 123"}',
        },
      ],
    });
  });

  it('completes ids by prefix', async () => {
    expect(await dataTemplate.complete!('id', '12', {})).toEqual({
      values: ['12', '123', '1234'],
      total: 3,
      hasMore: false,
    });
    expect((await dataTemplate.complete!('other', '', {})).values).toEqual([]);
  });
});
