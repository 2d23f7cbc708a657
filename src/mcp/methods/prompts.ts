// prompts/list and prompts/get: arguments are strings, required ones checked before the
// prompt runs.
import { isObject, RpcCodes, RpcError } from '../jsonrpc.js';
import { paginate } from '../pagination.js';
import {
  canUse,
  deniedError,
  requireString,
  type FeatureOptions,
  type Handler,
  type Shared,
} from './shared.js';

export function promptMethods(
  options: FeatureOptions,
  shared: Shared,
): { listPrompts: Handler; getPrompt: Handler } {
  const { registry, signer } = options;
  const pageSize = options.pageSize ?? 100;

  return {
    async listPrompts(params, scope) {
      const shown = shared.visible(registry.prompts(), scope.channel.principal);
      const page = paginate(signer, 'prompts', shown.items, params['cursor'], pageSize);
      const prompts = page.items.map((p) => {
        const item: Record<string, unknown> = { name: p.name };
        if (p.title !== undefined) item['title'] = p.title;
        if (p.description !== undefined) item['description'] = p.description;
        if (p.arguments !== undefined) item['arguments'] = p.arguments;
        return item;
      });
      return { prompts, ...page.next, ...shared.cacheHints(scope, shown.cacheScope) };
    },

    async getPrompt(params, scope) {
      const name = requireString(params, 'name');
      const prompt = registry.prompt(name);
      const unknownPrompt = (): RpcError =>
        new RpcError(
          RpcCodes.INVALID_PARAMS,
          `Unknown prompt: ${name}. Call prompts/list to see the prompts.`,
        );
      if (!prompt) throw unknownPrompt();
      const principal = scope.channel.principal;
      if (!canUse(prompt, principal)) throw deniedError('prompt', name, principal);
      const raw = params['arguments'] ?? {};
      if (!isObject(raw))
        throw new RpcError(
          RpcCodes.INVALID_PARAMS,
          'params.arguments must be an object of strings.',
        );
      const args: Record<string, string> = {};
      for (const [key, value] of Object.entries(raw)) {
        if (typeof value !== 'string') {
          throw new RpcError(RpcCodes.INVALID_PARAMS, `Prompt argument ${key} must be a string.`);
        }
        args[key] = value;
      }
      const missing = (prompt.arguments ?? []).filter(
        (a) => a.required && args[a.name] === undefined,
      );
      if (missing.length > 0) {
        throw new RpcError(
          RpcCodes.INVALID_PARAMS,
          `Missing required argument${missing.length > 1 ? 's' : ''} for prompt ${name}: ${missing.map((a) => a.name).join(', ')}.`,
        );
      }
      const outcome = await shared.withContext(
        params,
        scope,
        { method: 'prompts/get', name, args },
        (ctx) => prompt.get(args, ctx),
      );
      if ('inputRequired' in outcome) return outcome.inputRequired;
      return { ...outcome.value };
    },
  };
}
