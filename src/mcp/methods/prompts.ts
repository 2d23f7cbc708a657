// prompts/list and prompts/get: arguments are strings, required ones checked before the
// prompt runs.
import { isObject, RpcCodes, RpcError } from '../jsonrpc.js';
import { requireString, usable, type FeatureOptions, type Handler, type Shared } from './shared.js';

export function promptMethods(
  options: FeatureOptions,
  shared: Shared,
): { listPrompts: Handler; getPrompt: Handler } {
  const { registry } = options;

  return {
    listPrompts: async (params, scope) =>
      shared.listPage(
        'prompts',
        'prompts',
        registry.prompts(),
        { required: ['name'], optional: ['title', 'description', 'arguments'] },
        params,
        scope,
      ),

    async getPrompt(params, scope) {
      const name = requireString(params, 'name');
      const prompt = usable('prompt', name, registry.prompt(name), scope.channel.principal);
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
