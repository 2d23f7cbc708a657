// Token counts per `token_counter_type`. `openai` is exact for the text: the o200k_base BPE
// (GPT-4o, GPT-4.1, o-series) from gpt-tokenizer. Anthropic, Ollama's models and "generic" have
// no tokenizer we can run here, so they are estimates from the text's length, tuned to err
// high (a budget estimated low is the one that overflows a context window):
//   generic    1 token per 4 characters, the usual rule for English
//   anthropic  1 per 3.5 characters (Claude's vocabulary splits code and SQL finer)
//   ollama     1 per 3.8 characters (Llama-family sentencepiece vocabularies)
// Every estimate adds a few tokens per message for the role and separators, as chat formats do.
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { viewOf, type MessageView } from './message-parts.js';
import type { TokenCounterType } from './types.js';

const CHARS_PER_TOKEN: Record<Exclude<TokenCounterType, 'openai'>, number> = {
  generic: 4,
  anthropic: 3.5,
  ollama: 3.8,
};

const PER_MESSAGE: Record<TokenCounterType, number> = {
  generic: 4,
  openai: 4,
  anthropic: 5,
  ollama: 4,
};

// Past this many characters the BPE would cost more than its answer is worth (a 4 MiB tool dump
// takes seconds); the rest is counted at the BPE's own average for the start of the text.
const BPE_MAX_CHARS = 200_000;

/** Tokens of `text` alone (no message overhead). */
export function countTextTokens(text: string, counter: TokenCounterType): number {
  if (text === '') return 0;
  if (counter === 'openai') {
    if (text.length <= BPE_MAX_CHARS) return countTokens(text);
    const head = countTokens(text.slice(0, BPE_MAX_CHARS));
    return Math.ceil((head * text.length) / BPE_MAX_CHARS);
  }
  return Math.ceil(text.length / CHARS_PER_TOKEN[counter]);
}

/** Tokens of one message as a model would read it: its text, tool calls and results. */
export function messageTokens(message: unknown, counter: TokenCounterType): number {
  return viewTokens(viewOf(message), counter);
}

/** The same for a message already read. */
export function viewTokens(view: MessageView, counter: TokenCounterType): number {
  return countTextTokens(view.everything, counter) + PER_MESSAGE[counter];
}

/**
 * Tokens of a whole conversation (`counter` defaults to the generic estimate). The chat loop
 * compares this with the model's context to decide when to compact.
 */
export function estimateTokens(
  messages: readonly unknown[],
  counter: TokenCounterType = 'generic',
): number {
  let total = 0;
  for (const message of messages) total += messageTokens(message, counter);
  return total;
}
