// The CallContext a tool sees when the chat calls it: the caller's principal, the request's
// abort signal (a client that goes away cancels the running query), the chat's database
// choice. The chat has one question a tool may ask — query_database's "run this write?" — and
// it is answered by the person's approval of that very tool call in the client (AI SDK tool
// approval), never by the model: without an approval the answer is "no".
import { AppError, ErrorCodes } from '../core/errors.js';
import type { Principal } from '../core/principal.js';
import type { CallContext, DatabaseChoice, InputRequest } from '../core/specs.js';

export interface ChatContextInput {
  principal: Principal;
  signal: AbortSignal;
  database?: DatabaseChoice;
  /** The person approved this tool call in the client. */
  approved: boolean;
}

/** query_database's confirmation asks for a boolean `run` (tools/query/query-confirm.ts). */
const isWriteConfirmation = (request: InputRequest): boolean => {
  const schema = request.params['requestedSchema'] as
    { properties?: Record<string, { type?: unknown }> } | undefined;
  return schema?.properties?.['run']?.type === 'boolean';
};

export function chatContext(input: ChatContextInput): CallContext {
  return {
    principal: input.principal,
    signal: input.signal,
    ...(input.database ? { database: input.database } : {}),
    progress() {},
    log() {},
    clientSupports: (capability) => capability === 'elicitation',
    async requestInput<K extends string>(
      requests: Record<K, InputRequest>,
    ): Promise<Record<K, unknown>> {
      const out = {} as Record<K, unknown>;
      for (const [key, request] of Object.entries(requests) as [K, InputRequest][]) {
        if (request.method !== 'elicitation/create') {
          throw new AppError(
            ErrorCodes.CAPABILITY_MISSING,
            `The chat cannot answer ${request.method} requests.`,
            { category: 'input' },
          );
        }
        out[key] =
          input.approved && isWriteConfirmation(request)
            ? { action: 'accept', content: { run: true } }
            : { action: 'decline' };
      }
      return out;
    },
  };
}
