// Conformance tools that need the client: sampling and elicitation (server→client requests in
// the legacy era, input-required results in 2026-07-28), the SEP-1034 defaults and SEP-1330 enum
// forms, and the server-stateless probes for a missing capability and a clean response stream.
// They ask before doing anything else, so replaying them is harmless.
import { textResult } from '../../core/content.js';
import { EMPTY_OBJECT_SCHEMA } from '../../core/json-schema.js';
import type { ToolSpec } from '../../core/specs.js';
import {
  describeElicitation,
  elicit,
  readElicitation,
  readSampledText,
  sample,
} from './support.js';

export const sampling: ToolSpec = {
  name: 'test_sampling',
  description:
    'Asks the client to sample an LLM with the given prompt (conformance: tools-call-sampling).',
  inputSchema: {
    type: 'object',
    properties: { prompt: { type: 'string', description: 'The prompt to send to the LLM.' } },
    required: ['prompt'],
    additionalProperties: false,
  },
  async call(args, ctx) {
    const { reply } = await ctx.requestInput({ reply: sample(String(args.prompt), 100) });
    return textResult(`LLM response: ${readSampledText('reply', reply)}`);
  },
};

export const elicitation: ToolSpec = {
  name: 'test_elicitation',
  description:
    'Asks the user for a username and an email address (conformance: tools-call-elicitation).',
  inputSchema: {
    type: 'object',
    properties: { message: { type: 'string', description: 'The message to show the user.' } },
    required: ['message'],
    additionalProperties: false,
  },
  async call(args, ctx) {
    const { user } = await ctx.requestInput({
      user: elicit(String(args.message), {
        type: 'object',
        properties: {
          username: { type: 'string', description: "The user's name" },
          email: { type: 'string', description: "The user's email address" },
        },
        required: ['username', 'email'],
      }),
    });
    return textResult(`User response: ${describeElicitation(readElicitation('user', user))}`);
  },
};

export const elicitationDefaults: ToolSpec = {
  name: 'test_elicitation_sep1034_defaults',
  description:
    'Elicits one field of each primitive type, each with a default value (conformance: elicitation-sep1034-defaults).',
  inputSchema: EMPTY_OBJECT_SCHEMA,
  async call(_args, ctx) {
    const { profile } = await ctx.requestInput({
      profile: elicit('Review the profile; every field has a default.', {
        type: 'object',
        properties: {
          name: { type: 'string', description: 'Full name', default: 'John Doe' },
          age: { type: 'integer', description: 'Age in years', default: 30 },
          score: { type: 'number', description: 'Score', default: 95.5 },
          status: {
            type: 'string',
            description: 'Account status',
            enum: ['active', 'inactive', 'pending'],
            default: 'active',
          },
          verified: { type: 'boolean', description: 'Verified account', default: true },
        },
      }),
    });
    return textResult(
      `Elicitation completed: ${describeElicitation(readElicitation('profile', profile))}`,
    );
  },
};

export const elicitationEnums: ToolSpec = {
  name: 'test_elicitation_sep1330_enums',
  description:
    'Elicits the five enum forms: untitled and titled single-select, legacy enumNames, untitled and titled multi-select (conformance: elicitation-sep1330-enums).',
  inputSchema: EMPTY_OBJECT_SCHEMA,
  async call(_args, ctx) {
    const { choices } = await ctx.requestInput({
      choices: elicit('Pick one or more options in each list.', {
        type: 'object',
        properties: {
          untitledSingle: { type: 'string', enum: ['option1', 'option2', 'option3'] },
          titledSingle: {
            type: 'string',
            oneOf: [
              { const: 'value1', title: 'First Option' },
              { const: 'value2', title: 'Second Option' },
              { const: 'value3', title: 'Third Option' },
            ],
          },
          legacyEnum: {
            type: 'string',
            enum: ['opt1', 'opt2', 'opt3'],
            enumNames: ['Option One', 'Option Two', 'Option Three'],
          },
          untitledMulti: {
            type: 'array',
            items: { type: 'string', enum: ['option1', 'option2', 'option3'] },
          },
          titledMulti: {
            type: 'array',
            items: {
              anyOf: [
                { const: 'value1', title: 'First Choice' },
                { const: 'value2', title: 'Second Choice' },
                { const: 'value3', title: 'Third Choice' },
              ],
            },
          },
        },
      }),
    });
    return textResult(
      `Elicitation completed: ${describeElicitation(readElicitation('choices', choices))}`,
    );
  },
};

/**
 * server-stateless: called with empty clientCapabilities, the sampling request must end the
 * call with -32021 and `requiredCapabilities: { sampling: {} }` — so nothing here catches.
 */
export const missingCapability: ToolSpec = {
  name: 'test_missing_capability',
  description:
    'Needs sampling; a client that did not declare the sampling capability gets MissingRequiredClientCapability (conformance: server-stateless).',
  inputSchema: EMPTY_OBJECT_SCHEMA,
  async call(_args, ctx) {
    const { summary } = await ctx.requestInput({
      summary: sample('Summarise this conformance run in one line.', 50),
    });
    return textResult(`Sampled: ${readSampledText('summary', summary)}`);
  },
};

/**
 * server-stateless: on the 2026-07-28 wire the question must come back as an input-required
 * result on the response stream, never as an independent elicitation/create request.
 */
export const streamingElicitation: ToolSpec = {
  name: 'test_streaming_elicitation',
  description:
    'Asks the user to confirm; the request travels as an input-required result, not a server request (conformance: server-stateless).',
  inputSchema: EMPTY_OBJECT_SCHEMA,
  async call(_args, ctx) {
    const { confirmation } = await ctx.requestInput({
      confirmation: elicit('Continue the streaming test?', {
        type: 'object',
        properties: { proceed: { type: 'boolean', description: 'Continue?' } },
        required: ['proceed'],
      }),
    });
    return textResult(
      `Streaming elicitation answered: ${describeElicitation(readElicitation('confirmation', confirmation))}`,
    );
  },
};

export const clientRequestTools: readonly ToolSpec[] = [
  sampling,
  elicitation,
  elicitationDefaults,
  elicitationEnums,
  missingCapability,
  streamingElicitation,
];
