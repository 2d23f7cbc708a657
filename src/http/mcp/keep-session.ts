// After a message on a legacy session was handled: an initialize that succeeded makes the
// session visible on every instance; a change to what the session keeps (log level,
// subscriptions, selected database) reaches the other instances before the answer goes out, so
// the client's next request sees it wherever it lands. A cancellation or a client's answer
// meant for a request this instance does not hold went to the instance that holds it as soon
// as it was met (exchange.ts; inside a batch too): the answer waits until it was sent.
import type { Delivery, Incoming } from '../../mcp/inbound.js';
import type { HttpSession } from '../sessions.js';
import type { McpEndpoint } from './endpoint.js';

export async function keepSession(
  endpoint: McpEndpoint,
  place: { session: HttpSession; opened: boolean },
  incoming: Incoming,
  delivery: Delivery,
  forwarded: readonly Promise<void>[],
): Promise<void> {
  const { sessions, logger } = endpoint;
  const { session } = place;
  try {
    await Promise.all(forwarded);
    if (place.opened) {
      // A failed initialize creates no session.
      if (delivery.kind === 'answered' && 'result' in delivery.outcome.response) {
        await sessions.register(session);
      }
      return;
    }
    // A notification or a client's answer changes nothing kept.
    if (incoming.kind === 'notification' || incoming.kind === 'response') return;
    await sessions.keep(session);
  } catch (error) {
    // The session goes on here; the other instances may not see this change.
    logger.warn({ err: error, session: session.id }, 'a shared session could not be updated');
  }
}
