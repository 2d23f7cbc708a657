// A rendering bug must never leave a blank page: say what happened and offer a reload.
import { Component, type ErrorInfo, type ReactNode } from 'react';

interface State {
  message: string | null;
}

export class ErrorBoundary extends Component<{ children: ReactNode }, State> {
  override state: State = { message: null };

  static getDerivedStateFromError(error: unknown): State {
    return { message: error instanceof Error ? error.message : String(error) };
  }

  override componentDidCatch(error: unknown, info: ErrorInfo): void {
    console.error('pgmcp web client crashed', error, info.componentStack);
  }

  override render() {
    if (this.state.message === null) return this.props.children;
    return (
      <main className="centered">
        <div className="alert" role="alert">
          <p>Something went wrong in the page: {this.state.message}</p>
          <button type="button" onClick={() => location.reload()}>
            Reload
          </button>
        </div>
      </main>
    );
  }
}
