// The input-required-result-* fixtures (SEP-2322, 2026-07-28). Each handler asks through
// ctx.requestInput and is re-run from the top with the answers, so it asks before it does
// anything and a later question is simply a later requestInput call. Keys and questions follow
// the suite's scenario descriptions; the harness answers whatever keys it is given.
import { textResult } from '../../core/content.js';
import { EMPTY_OBJECT_SCHEMA } from '../../core/json-schema.js';
import type { InputRequest, PromptSpec, ToolSpec } from '../../core/specs.js';
import {
  LIST_ROOTS,
  acceptedText,
  askForText,
  describeElicitation,
  elicit,
  readElicitation,
  readRootUris,
  readSampledText,
  sample,
} from './support.js';

const noArgs = EMPTY_OBJECT_SCHEMA;

function rootsSentence(uris: readonly string[]): string {
  if (uris.length === 0) return 'The client shared no roots.';
  return `The client shared ${uris.length} root${uris.length === 1 ? '' : 's'}: ${uris.join(', ')}.`;
}

export const askElicitation: ToolSpec = {
  name: 'test_input_required_result_elicitation',
  description:
    "Asks for the user's name, then greets them (conformance: input-required-result-basic-elicitation).",
  inputSchema: noArgs,
  async call(_args, ctx) {
    const { user_name } = await ctx.requestInput({
      user_name: askForText('What is your name?', 'name'),
    });
    const answer = readElicitation('user_name', user_name);
    const name = acceptedText(answer, 'name');
    return textResult(name === undefined ? `No name given (${answer.action}).` : `Hello, ${name}!`);
  },
};

export const askSampling: ToolSpec = {
  name: 'test_input_required_result_sampling',
  description:
    "Asks the client's LLM for the capital of France (conformance: input-required-result-basic-sampling).",
  inputSchema: noArgs,
  async call(_args, ctx) {
    const { capital_question } = await ctx.requestInput({
      capital_question: sample('What is the capital of France?', 100),
    });
    return textResult(
      `The model answered: ${readSampledText('capital_question', capital_question)}`,
    );
  },
};

export const askRoots: ToolSpec = {
  name: 'test_input_required_result_list_roots',
  description:
    'Asks the client for its roots and lists them (conformance: input-required-result-basic-list-roots).',
  inputSchema: noArgs,
  async call(_args, ctx) {
    const { client_roots } = await ctx.requestInput({ client_roots: LIST_ROOTS });
    return textResult(rootsSentence(readRootUris('client_roots', client_roots)));
  },
};

const confirm = (message: string): InputRequest =>
  elicit(message, { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] });

/**
 * The requestState itself is sealed and checked by the protocol layer (a tampered one never
 * reaches this handler); `resumedFromState` tells the handler that it came back and verified.
 */
export const askWithState: ToolSpec = {
  name: 'test_input_required_result_request_state',
  description:
    'Asks for a confirmation and reports whether the requestState came back intact (conformance: input-required-result-request-state).',
  inputSchema: noArgs,
  async call(_args, ctx) {
    const { confirm: answer } = await ctx.requestInput({ confirm: confirm('Please confirm') });
    const summary = describeElicitation(readElicitation('confirm', answer));
    const state = ctx.resumedFromState ? 'state-ok' : 'state-not-echoed';
    return textResult(`Confirmation received (${summary}); ${state}`);
  },
};

export const askMany: ToolSpec = {
  name: 'test_input_required_result_multiple_inputs',
  description:
    'Asks for a name, a sampled greeting and the client roots in one round (conformance: input-required-result-multiple-input-requests).',
  inputSchema: noArgs,
  async call(_args, ctx) {
    const answers = await ctx.requestInput({
      user_name: askForText('What is your name?', 'name'),
      greeting: sample('Generate a greeting', 50),
      client_roots: LIST_ROOTS,
    });
    const name = acceptedText(readElicitation('user_name', answers.user_name), 'name') ?? 'someone';
    const greeting = readSampledText('greeting', answers.greeting);
    const roots = readRootUris('client_roots', answers.client_roots);
    return textResult(`${greeting} — for ${name}. ${rootsSentence(roots)}`);
  },
};

export const askInRounds: ToolSpec = {
  name: 'test_input_required_result_multi_round',
  description:
    'Asks for a name, then in a second round for a favourite colour (conformance: input-required-result-multi-round).',
  inputSchema: noArgs,
  async call(_args, ctx) {
    const { step1 } = await ctx.requestInput({
      step1: askForText('Step 1: What is your name?', 'name'),
    });
    const name = acceptedText(readElicitation('step1', step1), 'name') ?? 'someone';
    const { step2 } = await ctx.requestInput({
      step2: askForText('Step 2: What is your favorite color?', 'color'),
    });
    const color = acceptedText(readElicitation('step2', step2), 'color') ?? 'no colour';
    return textResult(`${name} likes ${color}.`);
  },
};

export const askToBeTampered: ToolSpec = {
  name: 'test_input_required_result_tampered_state',
  description:
    'Asks for an approval; a retry whose requestState was altered must be rejected (conformance: input-required-result-tampered-state).',
  inputSchema: noArgs,
  async call(_args, ctx) {
    const { approval } = await ctx.requestInput({ approval: confirm('Approve the operation?') });
    return textResult(
      `Approval recorded: ${describeElicitation(readElicitation('approval', approval))}`,
    );
  },
};

/** Asks only for what this request's clientCapabilities declare. */
export const askWithinCapabilities: ToolSpec = {
  name: 'test_input_required_result_capabilities',
  description:
    'Asks only for kinds of input the client declared: elicitation, sampling, roots (conformance: input-required-result-capability-check).',
  inputSchema: noArgs,
  async call(_args, ctx) {
    const requests: Record<string, InputRequest> = {};
    if (ctx.clientSupports('elicitation'))
      requests.user_name = askForText('What is your name?', 'name');
    if (ctx.clientSupports('sampling'))
      requests.haiku = sample('Write a haiku about databases.', 60);
    if (ctx.clientSupports('roots')) requests.client_roots = LIST_ROOTS;
    const keys = Object.keys(requests);
    if (keys.length === 0) {
      return textResult(
        'Nothing to ask: the client declared none of elicitation, sampling or roots.',
      );
    }
    const answers = await ctx.requestInput(requests);
    const parts = keys.map((key) => {
      if (key === 'haiku') return `sampled: ${readSampledText(key, answers[key])}`;
      if (key === 'client_roots') return rootsSentence(readRootUris(key, answers[key]));
      return `elicited: ${describeElicitation(readElicitation(key, answers[key]))}`;
    });
    return textResult(`Asked for ${keys.join(', ')}; ${parts.join('; ')}`);
  },
};

export const inputRequiredTools: readonly ToolSpec[] = [
  askElicitation,
  askSampling,
  askRoots,
  askWithState,
  askMany,
  askInRounds,
  askToBeTampered,
  askWithinCapabilities,
];

/** input-required-result-non-tool-request: MRTR on prompts/get. */
export const inputRequiredPrompt: PromptSpec = {
  name: 'test_input_required_result_prompt',
  description:
    'Asks which context to use before building the prompt (conformance: input-required-result-non-tool-request).',
  async get(_args, ctx) {
    const { user_context } = await ctx.requestInput({
      user_context: askForText('What context should the prompt use?', 'context'),
    });
    const context = acceptedText(readElicitation('user_context', user_context), 'context');
    return {
      description: 'A prompt built from context the user supplied',
      messages: [
        {
          role: 'user',
          content: {
            type: 'text',
            text:
              context === undefined
                ? 'No context was given; answer generally.'
                : `Use this context: ${context}`,
          },
        },
      ],
    };
  },
};
