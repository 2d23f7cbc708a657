// Modern-era input-required results (multi round-trip requests). A handler asks for input
// through ctx.requestInput; when an answer is missing we stop the handler, return the
// questions with a sealed requestState, and re-run it when the client returns with answers.
// Answers accumulate in the sealed state, so a handler may ask several times (multi-round).
import { hash } from 'node:crypto';
import { AppError, ErrorCodes } from '../core/errors.js';
import { INPUT_CAPABILITY, type InputRequest } from '../core/specs.js';
import { isObject, RpcCodes, RpcError } from './jsonrpc.js';
import type { Signer } from '../core/signed.js';

/** Thrown inside a handler to stop it until the client supplies the missing answers. */
export class InputRequiredSignal {
  constructor(readonly requests: Record<string, InputRequest>) {}
}

interface SealedState {
  v: 1;
  /** what the state belongs to: method, target name and a hash of the arguments */
  t: string;
  a: Record<string, unknown>;
  r: number;
  exp: number;
}

const STATE_TTL_MS = 15 * 60_000;

export interface InputRound {
  /** Answers known so far (from the sealed state and this request's inputResponses). */
  answered: Record<string, unknown>;
  round: number;
  target: string;
}

export function targetOf(method: string, name: string, args: unknown): string {
  // One-shot hash: every modern call works this out, and crypto.hash costs a quarter of a
  // createHash object's round trip.
  const digest = hash('sha256', JSON.stringify(args ?? {}), 'base64url');
  return `${method}\u0000${name}\u0000${digest.slice(0, 22)}`;
}

/** Validate requestState and merge inputResponses. Tampered or foreign state is an error. */
export function openRound(
  signer: Signer,
  target: string,
  params: Record<string, unknown>,
): InputRound {
  let answered: Record<string, unknown> = {};
  let round = 0;
  if (params['requestState'] !== undefined) {
    const state = signer.open(params['requestState']) as SealedState | undefined;
    if (!isObject(state) || state.v !== 1 || state.t !== target || !(state.exp > Date.now())) {
      throw new RpcError(
        RpcCodes.INVALID_PARAMS,
        'requestState is invalid, expired or was altered; start the request again without it.',
      );
    }
    answered = { ...state.a };
    round = state.r;
  }
  const responses = params['inputResponses'];
  if (responses !== undefined && !isObject(responses)) {
    throw new RpcError(
      RpcCodes.INVALID_PARAMS,
      'inputResponses must be an object keyed by request.',
    );
  }
  for (const [key, value] of Object.entries(responses ?? {})) answered[key] = value;
  return { answered, round, target };
}

/** Whether a client's answer has the shape of a result for that kind of request. */
function answerFits(request: InputRequest, answer: unknown): boolean {
  if (!isObject(answer)) return false;
  switch (request.method) {
    case 'elicitation/create':
      return ['accept', 'decline', 'cancel'].includes(answer['action'] as string);
    case 'sampling/createMessage':
      return isObject(answer['content']) || Array.isArray(answer['content']);
    case 'roots/list':
      return Array.isArray(answer['roots']);
  }
}

/** ctx.requestInput for the modern era. */
/**
 * Both eras: refuse input requests the client did not declare it can answer. The details
 * carry the ClientCapabilities object the modern era puts in its -32021 error.
 */
export function requireInputCapabilities(
  requests: Record<string, InputRequest>,
  clientCapabilities: Record<string, unknown>,
): void {
  const missing: Record<string, unknown> = {};
  for (const request of Object.values(requests)) {
    const capability = INPUT_CAPABILITY[request.method];
    if (!isObject(clientCapabilities[capability])) missing[capability] = {};
  }
  if (Object.keys(missing).length > 0) {
    throw new AppError(
      ErrorCodes.CAPABILITY_MISSING,
      `This request needs the client capabilities: ${Object.keys(missing).join(', ')} (the client did not declare them).`,
      { category: 'input', details: { requiredCapabilities: missing } },
    );
  }
}

export function modernRequestInput(round: InputRound, clientCapabilities: Record<string, unknown>) {
  return async <K extends string>(
    requests: Record<K, InputRequest>,
  ): Promise<Record<K, unknown>> => {
    const entries = Object.entries(requests) as [K, InputRequest][];
    requireInputCapabilities(requests, clientCapabilities);
    const missing: Record<string, InputRequest> = {};
    const out = {} as Record<K, unknown>;
    for (const [key, request] of entries) {
      const answer = round.answered[key];
      if (answerFits(request, answer)) out[key] = answer;
      else missing[key] = request;
    }
    if (Object.keys(missing).length > 0) throw new InputRequiredSignal(missing);
    return out;
  };
}

export function inputRequiredResult(
  signer: Signer,
  round: InputRound,
  signal: InputRequiredSignal,
): Record<string, unknown> {
  const answered: Record<string, unknown> = {};
  // Keep only answers that are still valid, so a wrong answer is asked again.
  for (const [key, value] of Object.entries(round.answered)) {
    if (!(key in signal.requests)) answered[key] = value;
  }
  const state: SealedState = {
    v: 1,
    t: round.target,
    a: answered,
    r: round.round + 1,
    exp: Date.now() + STATE_TTL_MS,
  };
  return {
    resultType: 'input_required',
    inputRequests: signal.requests,
    requestState: signer.seal(state),
  };
}

/**
 * A task's ctx.requestInput when its creating tools/call carried answers (inputBeforeTask):
 * what those answers cover is answered at once, the rest is asked the task's way.
 */
export function answeredFirst(
  round: InputRound,
  clientCapabilities: Record<string, unknown>,
  ask: <K extends string>(requests: Record<K, InputRequest>) => Promise<Record<K, unknown>>,
) {
  const known = modernRequestInput(round, clientCapabilities);
  return async <K extends string>(
    requests: Record<K, InputRequest>,
  ): Promise<Record<K, unknown>> => {
    try {
      return await known(requests);
    } catch (error) {
      if (error instanceof InputRequiredSignal) return ask(requests);
      throw error;
    }
  };
}
