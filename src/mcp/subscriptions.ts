// Change notifications: list_changed and resources/updated to legacy sessions, and the
// modern era's subscriptions/listen streams, both fed from the registry's events.
import type { Principal } from '../core/principal.js';
import type { Registry, CatalogKind } from '../tools/registry.js';
import type { Session } from './session.js';
import { isObject, RpcCodes, RpcError } from './jsonrpc.js';
import { META_SUBSCRIPTION_ID } from './versions.js';

const LIST_CHANGED: Record<CatalogKind, string> = {
  tools: 'notifications/tools/list_changed',
  resources: 'notifications/resources/list_changed',
  prompts: 'notifications/prompts/list_changed',
};

/** Fan registry events out to every initialized legacy session. Returns an unsubscribe. */
export function bindSessionNotifications(
  registry: Registry,
  sessions: () => Iterable<Session>,
): () => void {
  const offList = registry.onListChanged((kind, audience) => {
    for (const session of sessions()) {
      if (session.protocolVersion === null) continue;
      // A change in a database the session's caller may not use says nothing to it.
      if (audience && !audience(session.principal)) continue;
      session.notify(LIST_CHANGED[kind], {});
    }
  });
  const offUpdated = registry.onResourceUpdated((uri) => {
    for (const session of sessions()) {
      if (session.subscriptions.has(uri))
        session.notify('notifications/resources/updated', { uri });
    }
  });
  return () => {
    offList();
    offUpdated();
  };
}

export interface ListenFilter {
  toolsListChanged: boolean;
  promptsListChanged: boolean;
  resourcesListChanged: boolean;
  resourceSubscriptions: string[];
}

export function parseListenFilter(params: Record<string, unknown>): ListenFilter {
  const raw = params['notifications'];
  if (raw !== undefined && !isObject(raw)) {
    throw new RpcError(RpcCodes.INVALID_PARAMS, 'params.notifications must be an object.');
  }
  const filter = raw ?? {};
  const subs = filter['resourceSubscriptions'];
  if (subs !== undefined && (!Array.isArray(subs) || subs.some((u) => typeof u !== 'string'))) {
    throw new RpcError(
      RpcCodes.INVALID_PARAMS,
      'notifications.resourceSubscriptions must be a list of URIs.',
    );
  }
  return {
    toolsListChanged: filter['toolsListChanged'] === true,
    promptsListChanged: filter['promptsListChanged'] === true,
    resourcesListChanged: filter['resourcesListChanged'] === true,
    resourceSubscriptions: (subs as string[] | undefined) ?? [],
  };
}

/**
 * Serve one subscriptions/listen request: acknowledge, forward the requested
 * notifications tagged with the subscription id (the request's id), and resolve when
 * `until` aborts.
 */
export function listen(
  registry: Registry,
  filter: ListenFilter,
  /** The JSON-RPC id of the subscriptions/listen request: clients match notifications by it. */
  subscriptionId: string | number,
  send: (method: string, params: Record<string, unknown>) => void,
  until: AbortSignal,
  /** The listener: changes in databases it may not use are not forwarded. */
  principal: Principal,
): Promise<void> {
  const meta = { [META_SUBSCRIPTION_ID]: subscriptionId };
  const wanted: Record<CatalogKind, boolean> = {
    tools: filter.toolsListChanged,
    prompts: filter.promptsListChanged,
    resources: filter.resourcesListChanged,
  };
  const uris = new Set(filter.resourceSubscriptions);
  // The acknowledgement reports the filter we honour (every requested type is served).
  const honored: Record<string, unknown> = {};
  if (filter.toolsListChanged) honored['toolsListChanged'] = true;
  if (filter.promptsListChanged) honored['promptsListChanged'] = true;
  if (filter.resourcesListChanged) honored['resourcesListChanged'] = true;
  if (uris.size > 0) honored['resourceSubscriptions'] = [...uris];
  send('notifications/subscriptions/acknowledged', { notifications: honored, _meta: meta });
  const offList = registry.onListChanged((kind, audience) => {
    if (wanted[kind] && (!audience || audience(principal)))
      send(LIST_CHANGED[kind], { _meta: meta });
  });
  const offUpdated = registry.onResourceUpdated((uri) => {
    if (uris.has(uri)) send('notifications/resources/updated', { uri, _meta: meta });
  });
  return new Promise((resolve) => {
    const stop = (): void => {
      offList();
      offUpdated();
      resolve();
    };
    if (until.aborted) stop();
    else until.addEventListener('abort', stop, { once: true });
  });
}
