// The whole client: find out whether a sign-in is needed, then the workspace (databases,
// provider and model, conversations, chat or schema). A 401 anywhere returns to sign-in.
import { useCallback, useEffect, useState } from 'react';
import { api, type UserInfo } from './api/endpoints';
import { SignIn } from './components/sign-in';
import { Workspace } from './components/workspace';
import { onUnauthorized } from './lib/api';
import { describeError } from './lib/plain-error';
import { readToken, writeToken } from './lib/session';

type Phase =
  | { kind: 'loading' }
  | { kind: 'sign-in'; notice: string | null }
  | { kind: 'ready'; user: UserInfo }
  | { kind: 'failed'; message: string };

export function App() {
  const [phase, setPhase] = useState<Phase>({ kind: 'loading' });

  const boot = useCallback(async () => {
    setPhase({ kind: 'loading' });
    try {
      const user = await api.userInfo();
      if (user.authenticated) return setPhase({ kind: 'ready', user });
      // A stored token the server no longer takes: the session has ended. Dropped here, so no
      // later request carries it into a 401.
      const ended = readToken() !== null;
      if (ended) writeToken(null);
      // Not signed in: the anonymous answer says whether the server requires a sign-in, so
      // the page never probes a guarded route for a 401 (a red line in the console).
      if (user.sign_in_required === false) return setPhase({ kind: 'ready', user });
      setPhase({
        kind: 'sign-in',
        notice: ended ? 'Your session has ended. Sign in again.' : null,
      });
    } catch (error) {
      setPhase({ kind: 'failed', message: describeError(error) });
    }
    return undefined;
  }, []);

  useEffect(() => {
    void boot();
  }, [boot]);

  useEffect(
    () =>
      onUnauthorized(() => {
        writeToken(null);
        setPhase((current) =>
          current.kind === 'sign-in'
            ? current
            : { kind: 'sign-in', notice: 'Your session has ended. Sign in again.' },
        );
      }),
    [],
  );

  const logout = useCallback(async () => {
    try {
      await api.logout();
    } catch {
      // The token is dropped whatever the server says.
    }
    writeToken(null);
    setPhase({ kind: 'sign-in', notice: 'You are signed out.' });
  }, []);

  switch (phase.kind) {
    case 'loading':
      return (
        <main className="centered" role="status">
          Loading…
        </main>
      );
    case 'failed':
      return (
        <main className="centered">
          <div className="alert" role="alert">
            <p>{phase.message}</p>
            <button type="button" onClick={() => void boot()}>
              Try again
            </button>
          </div>
        </main>
      );
    case 'sign-in':
      return <SignIn notice={phase.notice} onSignedIn={() => void boot()} />;
    case 'ready':
      return <Workspace user={phase.user} onLogout={() => void logout()} />;
  }
}
