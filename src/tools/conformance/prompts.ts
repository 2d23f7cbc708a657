// Conformance prompts. Message texts the suites compare are verbatim; completion for
// test_prompt_with_arguments feeds completion-complete (which asks for arg1 with "test").
import { AppError, ErrorCodes } from '../../core/errors.js';
import type { PromptSpec } from '../../core/specs.js';
import { PNG_MIME_TYPE, TINY_PNG_BASE64 } from './media.js';
import { completeFrom } from './support.js';

function required(prompt: string, args: Record<string, string>, name: string): string {
  const value = args[name];
  if (value === undefined) {
    throw new AppError(
      ErrorCodes.PROMPT_ARGUMENT_MISSING,
      `Prompt ${prompt} needs the argument "${name}".`,
      {
        category: 'input',
        details: { prompt, argument: name },
      },
    );
  }
  return value;
}

export const simplePrompt: PromptSpec = {
  name: 'test_simple_prompt',
  title: 'Simple prompt',
  description: 'One fixed user message (conformance: prompts-get-simple).',
  get: async () => ({
    messages: [
      { role: 'user', content: { type: 'text', text: 'This is a simple prompt for testing.' } },
    ],
  }),
};

const ARGUMENT_SUGGESTIONS: Readonly<Record<string, readonly string[]>> = {
  arg1: ['paris', 'park', 'party', 'test', 'test-value', 'testing', 'hello'],
  arg2: ['world', 'work', 'test', 'testing'],
};

export const promptWithArguments: PromptSpec = {
  name: 'test_prompt_with_arguments',
  title: 'Prompt with arguments',
  description:
    'Substitutes two required arguments (conformance: prompts-get-with-args, completion-complete).',
  arguments: [
    { name: 'arg1', description: 'First test argument', required: true },
    { name: 'arg2', description: 'Second test argument', required: true },
  ],
  async get(args) {
    const arg1 = required('test_prompt_with_arguments', args, 'arg1');
    const arg2 = required('test_prompt_with_arguments', args, 'arg2');
    return {
      messages: [
        {
          role: 'user',
          content: { type: 'text', text: `Prompt with arguments: arg1='${arg1}', arg2='${arg2}'` },
        },
      ],
    };
  },
  complete: async (argument, value) => completeFrom(ARGUMENT_SUGGESTIONS[argument] ?? [], value),
};

export const promptWithEmbeddedResource: PromptSpec = {
  name: 'test_prompt_with_embedded_resource',
  title: 'Prompt with an embedded resource',
  description:
    'Embeds a text resource at the given URI, then asks to process it (conformance: prompts-get-embedded-resource).',
  arguments: [{ name: 'resourceUri', description: 'URI of the resource to embed', required: true }],
  async get(args) {
    const uri = required('test_prompt_with_embedded_resource', args, 'resourceUri');
    return {
      messages: [
        {
          role: 'user',
          content: {
            type: 'resource',
            resource: {
              uri,
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
    };
  },
};

export const promptWithImage: PromptSpec = {
  name: 'test_prompt_with_image',
  title: 'Prompt with an image',
  description: 'A PNG image followed by a question about it (conformance: prompts-get-with-image).',
  get: async () => ({
    messages: [
      { role: 'user', content: { type: 'image', data: TINY_PNG_BASE64, mimeType: PNG_MIME_TYPE } },
      { role: 'user', content: { type: 'text', text: 'Please analyze the image above.' } },
    ],
  }),
};

export const conformancePrompts: readonly PromptSpec[] = [
  simplePrompt,
  promptWithArguments,
  promptWithEmbeddedResource,
  promptWithImage,
];
