// completion/complete for prompt arguments and resource template variables.
import { isObject, RpcCodes, RpcError } from '../jsonrpc.js';
import { canUse, type FeatureOptions, type Handler } from './shared.js';

const MAX_VALUES = 100;

export function completionMethods(options: FeatureOptions): { complete: Handler } {
  const { registry } = options;
  return {
    async complete(params, scope) {
      const principal = scope.channel.principal;
      const ref = params['ref'];
      const argument = params['argument'];
      if (!isObject(ref) || !isObject(argument) || typeof argument['name'] !== 'string') {
        throw new RpcError(
          RpcCodes.INVALID_PARAMS,
          'completion/complete needs ref and argument {name, value}.',
        );
      }
      const value = typeof argument['value'] === 'string' ? argument['value'] : '';
      const context =
        isObject(params['context']) && isObject(params['context']['arguments'])
          ? (Object.fromEntries(
              Object.entries(params['context']['arguments']).filter(
                ([, v]) => typeof v === 'string',
              ),
            ) as Record<string, string>)
          : {};
      let completer;
      if (ref['type'] === 'ref/prompt') {
        const found = registry.prompt(String(ref['name']));
        // A hidden prompt or template completes like an unknown one.
        const prompt = found && canUse(found, principal) ? found : undefined;
        if (!prompt)
          throw new RpcError(RpcCodes.INVALID_PARAMS, `Unknown prompt: ${String(ref['name'])}`);
        completer = prompt.complete?.bind(prompt);
      } else if (ref['type'] === 'ref/resource') {
        const uri = String(ref['uri']);
        const template = registry
          .templates()
          .find((t) => t.uriTemplate === uri && canUse(t, principal));
        const resource = registry.resource(uri);
        if (!template && !(resource && canUse(resource, principal))) {
          throw new RpcError(RpcCodes.INVALID_PARAMS, `Unknown resource or template: ${uri}`);
        }
        completer = template?.complete?.bind(template);
      } else {
        throw new RpcError(RpcCodes.INVALID_PARAMS, 'ref.type must be ref/prompt or ref/resource.');
      }
      const found = completer ? await completer(argument['name'], value, context) : { values: [] };
      const values = found.values.slice(0, MAX_VALUES);
      const total = found.total ?? found.values.length;
      return { completion: { values, total, hasMore: found.hasMore ?? total > values.length } };
    },
  };
}
