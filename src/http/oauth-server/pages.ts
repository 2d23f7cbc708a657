// The built-in authorization server's pages: sign-in, consent and errors. Rendered on the
// server with every value escaped; no scripts at all, styles from one static file, and a
// Content-Security-Policy that allows nothing else (forms post only to this server, and the
// consent form's redirect only to the client's own origin).
import type { FastifyReply } from 'fastify';

export const STYLESHEET_PATH = '/oauth/assets/pages.css';

const escape = (value: string): string => value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

export const STYLESHEET = `
:root { color-scheme: light; font-family: system-ui, sans-serif; }
body { margin: 0; min-height: 100vh; display: grid; place-items: center; background: #f4f5f7; }
main { width: min(24rem, 92vw); background: #fff; padding: 2rem; border-radius: 12px;
  box-shadow: 0 2px 12px rgba(0,0,0,.08); color: #1d2330; }
h1 { font-size: 1.3rem; margin: 0 0 .25rem; }
p.lead { margin: 0 0 1.5rem; color: #556; }
label { display: block; font-size: .9rem; margin: 1rem 0 .3rem; }
input[type=text], input[type=password] { width: 100%; box-sizing: border-box; padding: .6rem;
  border: 1px solid #c5c9d3; border-radius: 6px; font-size: 1rem; }
button { margin-top: 1.5rem; width: 100%; padding: .7rem; border: 0; border-radius: 6px;
  background: #2f5bd3; color: #fff; font-size: 1rem; cursor: pointer; }
button.secondary { background: #e4e7ee; color: #1d2330; margin-top: .6rem; }
.error { background: #fde8e8; color: #8a1c1c; padding: .6rem .8rem; border-radius: 6px; }
ul.scopes { padding-left: 1.2rem; } code { font-size: .95em; }
.brand { font-weight: 600; color: #2f5bd3; letter-spacing: .02em; margin-bottom: 1rem; }
small { color: #667; }
`;

export interface PageFrame {
  /** Where forms may post (and, for consent, be redirected): extra form-action sources. */
  formTargets?: readonly string[];
}

function send(
  reply: FastifyReply,
  status: number,
  title: string,
  body: string,
  frame: PageFrame = {},
) {
  const formAction = ["'self'", ...(frame.formTargets ?? [])].join(' ');
  return reply
    .code(status)
    .headers({
      'content-type': 'text/html; charset=utf-8',
      'content-security-policy': `default-src 'none'; style-src 'self'; img-src 'self'; form-action ${formAction}; frame-ancestors 'none'; base-uri 'none'`,
      'x-frame-options': 'DENY',
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
      'cache-control': 'no-store',
    })
    .send(
      `<!doctype html><html lang="en"><head><meta charset="utf-8">` +
        `<meta name="viewport" content="width=device-width, initial-scale=1">` +
        `<title>${escape(title)}</title><link rel="stylesheet" href="${STYLESHEET_PATH}"></head>` +
        `<body><main><div class="brand">pgmcp</div>${body}</main></body></html>`,
    );
}

export interface FormState {
  request: string;
  csrf: string;
}

const hidden = (state: FormState): string =>
  `<input type="hidden" name="request" value="${escape(state.request)}">` +
  `<input type="hidden" name="csrf" value="${escape(state.csrf)}">`;

export function loginPage(
  reply: FastifyReply,
  input: FormState & { clientName: string; redirectHost: string; error?: string; status?: number },
) {
  const error = input.error ? `<p class="error" role="alert">${escape(input.error)}</p>` : '';
  return send(
    reply,
    input.status ?? 200,
    'Sign in — pgmcp',
    `<h1>Sign in</h1><p class="lead"><strong>${escape(input.clientName)}</strong> wants to use this ` +
      `pgmcp server for you. <small>(returns to ${escape(input.redirectHost)})</small></p>${error}` +
      `<form method="post" action="/oauth/login">${hidden(input)}` +
      `<label for="username">User name</label>` +
      `<input type="text" id="username" name="username" autocomplete="username" required autofocus>` +
      `<label for="password">Password</label>` +
      `<input type="password" id="password" name="password" autocomplete="current-password" required>` +
      `<button type="submit">Sign in</button></form>`,
  );
}

export function consentPage(
  reply: FastifyReply,
  input: FormState & {
    clientName: string;
    username: string;
    scopes: readonly string[];
    redirectHost: string;
    redirectTarget: string;
  },
) {
  const scopes =
    input.scopes.length > 0
      ? `<ul class="scopes">${input.scopes.map((s) => `<li><code>${escape(s)}</code></li>`).join('')}</ul>`
      : '<p>No roles: it may use only what anyone signed in may use.</p>';
  return send(
    reply,
    200,
    'Allow access — pgmcp',
    `<h1>Allow access?</h1><p class="lead"><strong>${escape(input.clientName)}</strong> asks to use ` +
      `pgmcp as <strong>${escape(input.username)}</strong> with these roles:</p>${scopes}` +
      `<p><small>You will return to ${escape(input.redirectHost)}.</small></p>` +
      `<form method="post" action="/oauth/consent">${hidden(input)}` +
      `<button type="submit" name="decision" value="allow">Allow</button>` +
      `<button type="submit" name="decision" value="deny" class="secondary">Deny</button></form>`,
    { formTargets: [input.redirectTarget] },
  );
}

export function errorPage(reply: FastifyReply, status: number, code: string, message: string) {
  return send(
    reply,
    status,
    'Cannot continue — pgmcp',
    `<h1>Cannot continue</h1><p class="error" role="alert">${escape(message)}</p>` +
      `<p><small>${escape(code)}. Go back to the application and start again.</small></p>`,
  );
}
