// Preloaded (`node --import`) into the client programs test/helpers/lb-clients-spawned.ts runs:
// appends every host name the program looks up and every address it connects to (or tries) to
// the file PGMCP_OUTBOUND_LOG names, one a line, so the test can check all of them were
// loopback. Plain JavaScript: the programs run on Node without the test's TypeScript loader.
import { subscribe } from 'node:diagnostics_channel';
import { appendFileSync } from 'node:fs';

const log = process.env.PGMCP_OUTBOUND_LOG;
if (log) {
  const note = (destination) => appendFileSync(log, `${destination}\n`);
  subscribe('net.client.socket', ({ socket }) => {
    socket.on('lookup', (_error, address, _family, host) => {
      note(host);
      note(address);
    });
    socket.on('connectionAttempt', (ip) => note(ip));
    socket.once('connect', () => {
      if (socket.remoteAddress) note(socket.remoteAddress);
    });
  });
  // fetch (Node's own undici, or the npm package): the host before any connection is tried.
  subscribe('undici:client:beforeConnect', ({ connectParams }) => note(connectParams.hostname));
}
