// `pgmcp chat --once "question"`: one answer for scripts. Text mode prints the answer as the
// terminal client would (no spinner; no colour unless stdout is a colour terminal); --json
// prints one JSON document (its shape is documented in docs/chat.md). Writes are refused unless
// --yes, as nobody is there to confirm them.
import { getToolName, isToolUIPart, type UIMessage } from 'ai';
import type { ChatContext } from './context.js';
import type { AnswerMetadata } from './session.js';
import { runTurn } from './turn.js';

export interface OnceOptions {
  json: boolean;
  /** Approve writes without asking. */
  yes: boolean;
}

export interface OnceJson {
  conversationId: string;
  text: string;
  steps: {
    tool: string;
    input: unknown;
    state: string;
    output?: unknown;
    error?: string;
    approved?: boolean;
  }[];
  metadata: AnswerMetadata | null;
  error: string | null;
}

/** Exit codes: 0 answered, 1 the answer failed, 130 stopped by SIGINT. */
export async function runOnce(
  question: string,
  context: ChatContext,
  options: OnceOptions,
): Promise<number> {
  const { session, term } = context;
  const before = session.messages.length;
  let interrupted = false;
  const onSigint = (): void => {
    interrupted = true;
    void session.stop();
  };
  process.on('SIGINT', onSigint);
  const result = await (async () => {
    try {
      return await runTurn(question, context, async (approval) => {
        if (!options.yes) {
          term.note(`(refused a write: ${describe(approval.input)}; --yes approves writes)`);
        }
        return options.yes;
      });
    } finally {
      process.off('SIGINT', onSigint);
    }
  })();
  if (options.json) {
    const answers = session.messages.slice(before).filter((m) => m.role === 'assistant');
    term.print(JSON.stringify(toJson(session.conversationId, answers, result.error ?? null)));
  }
  if (interrupted) return 130;
  return result.error ? 1 : 0;
}

const describe = (input: unknown): string => {
  const query = (input as { query?: unknown })?.query;
  return typeof query === 'string' ? query.replace(/\s+/g, ' ').trim() : JSON.stringify(input);
};

export function toJson(
  conversationId: string,
  answers: readonly UIMessage[],
  error: string | null,
): OnceJson {
  const steps: OnceJson['steps'] = [];
  const texts: string[] = [];
  let metadata: AnswerMetadata | null = null;
  for (const message of answers) {
    if (message.metadata) metadata = message.metadata as AnswerMetadata;
    for (const part of message.parts) {
      if (part.type === 'text') texts.push(part.text);
      else if (isToolUIPart(part)) {
        steps.push({
          tool: getToolName(part),
          input: part.input,
          state: part.state,
          ...(part.state === 'output-available' ? { output: part.output } : {}),
          ...(part.state === 'output-error' ? { error: part.errorText } : {}),
          ...(part.approval && 'approved' in part.approval && part.approval.approved !== undefined
            ? { approved: part.approval.approved }
            : {}),
        });
      }
    }
  }
  return {
    conversationId: metadata?.conversationId ?? conversationId,
    text: texts.join('\n\n'),
    steps,
    metadata,
    error,
  };
}
