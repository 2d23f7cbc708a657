// Loaded into the server by bench/soak.mjs (node --expose-gc --import): on the soak's 'sample'
// message, collect garbage and send back process.memoryUsage(), so the soak reads the heap that
// survives a collection rather than whatever garbage happens to be waiting. Only in the process
// the soak started (PGMCP_SOAK_PROBE, removed at once so no child of the server inherits it).
if (process.env.PGMCP_SOAK_PROBE === '1' && process.send) {
  delete process.env.PGMCP_SOAK_PROBE;
  process.on('message', (message) => {
    if (message !== 'sample') return;
    globalThis.gc?.();
    process.send?.({ memory: process.memoryUsage() });
  });
  // The channel must not keep the server alive once it is asked to stop.
  process.channel?.unref();
}
