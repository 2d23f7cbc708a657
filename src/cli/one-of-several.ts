// What `serve --http` says at start about running as one of several instances. Several
// instances share what they keep through one PostgreSQL state database (state.url); the
// embedded state lives in one process's data directory: a second server on that directory
// that serves beyond loopback is refused (it would share tokens but not sessions, so it cannot
// stand in for the first behind a balancer); on loopback (development, tests) it is told so and
// goes on, as before; a server reachable beyond loopback says it cannot be one of several.
import type { Logger } from 'pino';
import type { Authenticator } from '../auth/index.js';
import type { Config } from '../config/index.js';
import { AppError, ErrorCodes } from '../core/errors.js';
import { isLoopbackAddress } from '../http/origin.js';

export function checkOneOfSeveral(config: Config, auth: Authenticator, logger: Logger): void {
  const loopback = isLoopbackAddress(config.http.host);
  if (auth.db.mode === 'embedded-attached' && loopback) {
    logger.warn(
      { state: auth.db.description },
      'another pgmcp server runs the embedded state this one uses: tokens and users are shared, MCP sessions are not; set state.url for several instances',
    );
  } else if (auth.db.mode === 'embedded-attached') {
    throw new AppError(
      ErrorCodes.EMBEDDED_LOCKED,
      `Another pgmcp server runs the ${auth.db.description}, the state database this one would ` +
        'use: two servers cannot share an embedded state. Set state.url (PGMCP_STATE_URL) to one ' +
        'PostgreSQL database for every instance, or start this one with --data-dir pointing to a ' +
        'different directory.',
      { category: 'unavailable', details: { state: auth.db.description } },
    );
  }
  if (config.state.url === null && !loopback) {
    logger.warn(
      { state: auth.db.description },
      'the state (tokens, users, MCP sessions) is the embedded database: this instance cannot be one of several behind a load balancer; set state.url to a PostgreSQL database they all share',
    );
  }
}
