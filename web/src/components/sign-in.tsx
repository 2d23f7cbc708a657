// Sign in with a pgmcp user name and password (POST /api/login); the session token it returns
// is what every later request carries.
import { useState, type FormEvent } from 'react';
import { api } from '../api/endpoints';
import { describeError } from '../lib/plain-error';
import { writeToken } from '../lib/session';

export function SignIn({ onSignedIn, notice }: { onSignedIn(): void; notice?: string | null }) {
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const answer = await api.login(username, password);
      writeToken(answer.session_token);
      setPassword('');
      onSignedIn();
    } catch (failure) {
      const text = describeError(failure);
      setError(
        text.startsWith('You are not signed in')
          ? 'That user name and password do not match, or the account is locked for a while.'
          : text,
      );
    } finally {
      setBusy(false);
    }
  };

  return (
    <main className="sign-in">
      <form onSubmit={(e) => void submit(e)} aria-labelledby="sign-in-title">
        <h1 id="sign-in-title">Sign in to pgmcp</h1>
        {notice ? <p className="muted">{notice}</p> : null}
        <label>
          User name
          <input
            name="username"
            autoComplete="username"
            value={username}
            onChange={(e) => setUsername(e.target.value)}
            required
            autoFocus
          />
        </label>
        <label>
          Password
          <input
            name="password"
            type="password"
            autoComplete="current-password"
            value={password}
            onChange={(e) => setPassword(e.target.value)}
            required
          />
        </label>
        {error ? (
          <p className="error-text" role="alert">
            {error}
          </p>
        ) : null}
        <button type="submit" className="primary" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}
