// POST /api/llm/chat (the pgEdge-compatible LLM proxy): the caller's messages and tool definitions go to
// the chosen provider and the model's message comes back with its tool calls, for clients that
// run their own loop. Nothing runs here: tools have no implementation on this path, so a tool
// call is only ever returned, never executed. Keys stay in the server.
import {
  generateText,
  jsonSchema,
  modelMessageSchema,
  streamText,
  tool,
  type ModelMessage,
  type ToolSet,
} from 'ai';
import type { LlmConfig } from '../config/index.js';
import { chatInvalid, providerFailure } from './errors.js';
import type { LlmProviders } from './providers.js';
import { aiTelemetry } from '../core/tracing.js';

export interface ProxyToolDefinition {
  name: string;
  description?: string;
  /** JSON Schema of the arguments (`parameters` is accepted for the same thing). */
  inputSchema?: Record<string, unknown>;
  parameters?: Record<string, unknown>;
}

export interface ProxyRequest {
  provider?: string;
  model?: string;
  messages: unknown[];
  tools?: ProxyToolDefinition[];
  system?: string;
  stream?: boolean;
}

export interface ProxyAnswer {
  message: ModelMessage;
  toolCalls: { toolCallId: string; toolName: string; input: unknown }[];
  usage: { inputTokens: number; outputTokens: number; totalTokens: number };
  finishReason: string;
}

const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

function checkMessages(messages: unknown[]): ModelMessage[] {
  const schema = modelMessageSchema;
  return messages.map((message, i) => {
    const parsed = schema.safeParse(message);
    if (!parsed.success) {
      throw chatInvalid(
        `messages[${i}] is not an AI SDK model message ({role, content}): ${parsed.error.issues[0]?.message ?? 'invalid'}.`,
      );
    }
    return parsed.data as ModelMessage;
  });
}

function toolSet(definitions: ProxyToolDefinition[] | undefined): ToolSet | undefined {
  if (!definitions || definitions.length === 0) return undefined;
  const tools: ToolSet = {};
  for (const definition of definitions) {
    if (!TOOL_NAME.test(definition.name)) {
      throw chatInvalid(
        `Tool name ${JSON.stringify(definition.name)} is not 1-64 letters, digits, _ or -.`,
      );
    }
    const schema = definition.inputSchema ??
      definition.parameters ?? { type: 'object', properties: {} };
    tools[definition.name] = tool({
      ...(definition.description !== undefined ? { description: definition.description } : {}),
      inputSchema: jsonSchema(schema),
    });
  }
  return tools;
}

const usageOf = (usage: {
  inputTokens: number | undefined;
  outputTokens: number | undefined;
  totalTokens: number | undefined;
}): ProxyAnswer['usage'] => ({
  inputTokens: usage.inputTokens ?? 0,
  outputTokens: usage.outputTokens ?? 0,
  totalTokens: usage.totalTokens ?? (usage.inputTokens ?? 0) + (usage.outputTokens ?? 0),
});

export interface Proxy {
  /** The model's answer, or (stream: true) a web Response carrying the AI SDK UI message stream. */
  run(request: ProxyRequest, signal: AbortSignal): Promise<ProxyAnswer | Response>;
}

export function createProxy(providers: LlmProviders, llm: LlmConfig): Proxy {
  return {
    async run(request, signal) {
      const provider = providers.get(request.provider ?? null);
      const modelId = request.model ?? provider.defaultModel;
      const messages = checkMessages(request.messages);
      const tools = toolSet(request.tools);
      const secrets = providers.secrets();
      const settings = {
        model: provider.languageModel(modelId),
        messages,
        // The caller owns the whole prompt here, system messages among its messages included
        // (the AI SDK refuses those unless told otherwise).
        allowSystemInMessages: true,
        ...(request.system !== undefined ? { instructions: request.system } : {}),
        ...(tools ? { tools } : {}),
        maxOutputTokens: llm.maxOutputTokens,
        maxRetries: llm.maxRetries,
        abortSignal: AbortSignal.any([signal, AbortSignal.timeout(llm.timeoutMs)]),
        experimental_telemetry: aiTelemetry('pgmcp.proxy'),
      };
      if (request.stream === true) {
        // Errors reach the client as the stream's error chunk; nothing goes to the console.
        const result = streamText({ ...settings, onError: () => undefined });
        return result.toUIMessageStreamResponse({
          onError: (error) => providerFailure(error, provider.name, secrets).message,
          messageMetadata: ({ part }) =>
            part.type === 'finish'
              ? { provider: provider.name, model: modelId, usage: usageOf(part.totalUsage) }
              : undefined,
        });
      }
      try {
        const result = await generateText(settings);
        const message = result.response.messages.find((m) => m.role === 'assistant') ?? {
          role: 'assistant' as const,
          content: result.text,
        };
        return {
          message,
          toolCalls: result.toolCalls.map((call) => ({
            toolCallId: call.toolCallId,
            toolName: call.toolName,
            input: call.input,
          })),
          usage: usageOf(result.usage),
          finishReason: result.finishReason,
        };
      } catch (error) {
        throw providerFailure(error, provider.name, secrets);
      }
    },
  };
}
