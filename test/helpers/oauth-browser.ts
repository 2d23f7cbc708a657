// A browser as far as pgmcp's sign-in and consent pages need one: it keeps the cookie, reads
// the hidden fields of the form it was given and posts it back form-encoded, as a browser would.
export interface PageForm {
  status: number;
  html: string;
  request: string;
  csrf: string;
  cookie: string | null;
}

const hiddenField = (html: string, name: string): string =>
  new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1] ?? '';

export async function openAuthorization(
  url: URL | string,
  cookie: string | null = null,
): Promise<PageForm> {
  const res = await fetch(url, { redirect: 'manual', headers: cookie ? { cookie } : {} });
  const html = await res.text();
  const set = res.headers.get('set-cookie');
  return {
    status: res.status,
    html,
    request: hiddenField(html, 'request'),
    csrf: hiddenField(html, 'csrf'),
    cookie: set ? set.split(';')[0]! : cookie,
  };
}

export async function postForm(
  url: string,
  fields: Record<string, string>,
  cookie: string | null,
): Promise<{ status: number; html: string; location: string | null }> {
  const res = await fetch(url, {
    method: 'POST',
    redirect: 'manual',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      ...(cookie ? { cookie } : {}),
    },
    body: new URLSearchParams(fields).toString(),
  });
  return { status: res.status, html: await res.text(), location: res.headers.get('location') };
}

/** Sign in and allow: the redirect back to the client. */
export async function signInAndAllow(
  authorizationUrl: URL | string,
  username: string,
  password: string,
): Promise<URL> {
  const page = await openAuthorization(authorizationUrl);
  if (page.status !== 200) throw new Error(`authorize answered ${page.status}: ${page.html}`);
  const origin = new URL(authorizationUrl).origin;
  const consent = await postForm(
    `${origin}/oauth/login`,
    { request: page.request, csrf: page.csrf, username, password },
    page.cookie,
  );
  if (consent.status !== 200) throw new Error(`login answered ${consent.status}: ${consent.html}`);
  const done = await postForm(
    `${origin}/oauth/consent`,
    { request: page.request, csrf: page.csrf, decision: 'allow' },
    page.cookie,
  );
  if (done.status !== 302 || !done.location) throw new Error(`consent answered ${done.status}`);
  return new URL(done.location);
}
