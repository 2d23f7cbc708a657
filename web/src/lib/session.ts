// The signed-in session token survives a reload in localStorage; logout and a 401 clear it.
// The strict CSP (no inline or foreign scripts) is what keeps other code from reading it.
const KEY = 'pgmcp.session';

export function readToken(): string | null {
  try {
    return localStorage.getItem(KEY);
  } catch {
    return null;
  }
}

export function writeToken(token: string | null): void {
  try {
    if (token === null) localStorage.removeItem(KEY);
    else localStorage.setItem(KEY, token);
  } catch {
    // Storage disabled (private mode): the session then lasts as long as the page.
  }
}

export function authHeaders(): Record<string, string> {
  const token = readToken();
  return token ? { authorization: `Bearer ${token}` } : {};
}
