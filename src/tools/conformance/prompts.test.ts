import { describe, expect, it } from 'vitest';
import { ErrorCodes } from '../../core/errors.js';
import { createFakeContext } from '../../testing/fake-context.js';
import { TINY_PNG_BASE64 } from './media.js';
import {
  promptWithArguments,
  promptWithEmbeddedResource,
  promptWithImage,
  simplePrompt,
} from './prompts.js';

describe('conformance prompts', () => {
  it('test_simple_prompt is one user text message', async () => {
    const { ctx } = createFakeContext();
    expect(await simplePrompt.get({}, ctx)).toEqual({
      messages: [
        { role: 'user', content: { type: 'text', text: 'This is a simple prompt for testing.' } },
      ],
    });
  });

  it('test_prompt_with_arguments substitutes both arguments', async () => {
    const { ctx } = createFakeContext();
    expect(await promptWithArguments.get({ arg1: 'hello', arg2: 'world' }, ctx)).toEqual({
      messages: [
        {
          role: 'user',
          content: { type: 'text', text: "Prompt with arguments: arg1='hello', arg2='world'" },
        },
      ],
    });
    expect(promptWithArguments.arguments).toEqual([
      { name: 'arg1', description: 'First test argument', required: true },
      { name: 'arg2', description: 'Second test argument', required: true },
    ]);
  });

  it('test_prompt_with_arguments refuses a missing argument', async () => {
    const { ctx } = createFakeContext();
    await expect(promptWithArguments.get({ arg1: 'x' }, ctx)).rejects.toMatchObject({
      code: ErrorCodes.PROMPT_ARGUMENT_MISSING,
    });
  });

  it('completes arg1 by prefix, as completion-complete asks ("test", "par")', async () => {
    expect(await promptWithArguments.complete!('arg1', 'test', {})).toEqual({
      values: ['test', 'test-value', 'testing'],
      total: 3,
      hasMore: false,
    });
    expect((await promptWithArguments.complete!('arg1', 'par', {})).values).toEqual([
      'paris',
      'park',
      'party',
    ]);
    expect((await promptWithArguments.complete!('nope', '', {})).values).toEqual([]);
  });

  it('test_prompt_with_embedded_resource embeds the given URI, then asks to process it', async () => {
    const { ctx } = createFakeContext();
    expect(
      await promptWithEmbeddedResource.get({ resourceUri: 'test://example-resource' }, ctx),
    ).toEqual({
      messages: [
        {
          role: 'user',
          content: {
            type: 'resource',
            resource: {
              uri: 'test://example-resource',
              mimeType: 'text/plain',
              text: 'Embedded resource content for testing.',
            },
          },
        },
        {
          role: 'user',
          content: { type: 'text', text: 'Please process the embedded resource above.' },
        },
      ],
    });
  });

  it('test_prompt_with_image is a PNG then a question', async () => {
    const { ctx } = createFakeContext();
    expect(await promptWithImage.get({}, ctx)).toEqual({
      messages: [
        { role: 'user', content: { type: 'image', data: TINY_PNG_BASE64, mimeType: 'image/png' } },
        { role: 'user', content: { type: 'text', text: 'Please analyze the image above.' } },
      ],
    });
  });
});
