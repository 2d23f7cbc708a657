// The baseline: a bare node:http server that does the least a JSON-RPC endpoint can do —
// read the POST body, JSON.parse it, answer a small result with the request's id.
// Forked by run.mjs; reports its port over IPC and exits when the parent goes away.
//
// Given a database (run.mjs's `floor` variant), it also answers tools/call the least a server
// that runs SQL over HTTP can: the arguments' query and params through a pg.Pool, the rows as
// JSON, no session, no checks: a bare reference for what HTTP and this SQL cost on the machine.
import http from 'node:http';
import pg from 'pg';

// run.mjs may hand over pgmcp's tools/list result: the echo then answers tools/list with
// those same bytes, so a baseline with the same payload size can be measured too.
let toolsListResult = null;
let pool = null;
process.on('message', (m) => {
  if (m?.type === 'tools-list') toolsListResult = JSON.stringify(m.result);
  if (m?.type === 'database' && pool === null) {
    pool = new pg.Pool({ connectionString: m.url, max: m.poolSize });
    pool.on('error', () => undefined);
    process.send?.({ type: 'database-ready' });
  }
});

function send(res, status, out) {
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(out),
  });
  res.end(out);
}

/** tools/call: the lookup through the pool, answered as {structuredContent: {rows}}. */
function call(res, id, args) {
  pool.query({ text: args?.query, values: args?.params ?? [], rowMode: 'array' }).then(
    (result) => {
      const rows = JSON.stringify(result.rows);
      send(
        res,
        200,
        `{"jsonrpc":"2.0","id":${id},"result":{"content":[{"type":"text","text":${JSON.stringify(rows)}}],"structuredContent":{"rows":${rows}}}}`,
      );
    },
    (error) =>
      send(
        res,
        200,
        `{"jsonrpc":"2.0","id":${id},"error":{"code":-32603,"message":${JSON.stringify(String(error?.message))}}}`,
      ),
  );
}

const server = http.createServer((req, res) => {
  if (req.method !== 'POST') {
    res.writeHead(405, { allow: 'POST' }).end();
    return;
  }
  let body = '';
  req.setEncoding('utf8');
  req.on('data', (chunk) => {
    body += chunk;
  });
  req.on('end', () => {
    let message;
    try {
      message = JSON.parse(body);
    } catch {
      const error = '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}';
      res.writeHead(400, { 'content-type': 'application/json' }).end(error);
      return;
    }
    const id = JSON.stringify(message?.id ?? null);
    if (message?.method === 'tools/call') {
      if (pool !== null) call(res, id, message.params?.arguments);
      else {
        const error = '{"code":-32601,"message":"tools/call: the echo server has no database"}';
        send(res, 200, `{"jsonrpc":"2.0","id":${id},"error":${error}}`);
      }
      return;
    }
    const out =
      message?.method === 'tools/list' && toolsListResult !== null
        ? `{"jsonrpc":"2.0","id":${id},"result":${toolsListResult}}`
        : `{"jsonrpc":"2.0","id":${id},"result":{}}`;
    send(res, 200, out);
  });
});
// Same idle keep-alive as Fastify's default, so neither side closes sockets mid-cell.
server.keepAliveTimeout = 72_000;

server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.send?.({ type: 'ready', port: typeof address === 'object' ? address?.port : null });
});
process.on('disconnect', () => process.exit(0));
process.on('SIGTERM', () => process.exit(0));
