// A write the model wants to run waits for the person: the statement is shown in full, and
// nothing runs until they press Run. Esc or Cancel refuses it.
import { useEffect, useRef } from 'react';

interface Props {
  statement: string;
  database?: string | null;
  onAnswer(approved: boolean): void;
}

export function ApprovalDialog({ statement, database, onAnswer }: Props) {
  const cancel = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    // Focus the safe choice first.
    cancel.current?.focus();
    const onKey = (event: KeyboardEvent) => {
      if (event.key === 'Escape') {
        event.preventDefault();
        event.stopPropagation();
        onAnswer(false);
      }
    };
    window.addEventListener('keydown', onKey, true);
    return () => window.removeEventListener('keydown', onKey, true);
  }, [onAnswer]);

  return (
    <div className="backdrop">
      <div
        className="dialog"
        role="alertdialog"
        aria-modal="true"
        aria-labelledby="approval-title"
        aria-describedby="approval-text"
      >
        <h2 id="approval-title">Run this statement?</h2>
        <p id="approval-text">
          The assistant wants to change data{database ? ` in ${database}` : ''}. It runs only if you
          press Run.
        </p>
        <pre className="code-block statement">
          <code>{statement}</code>
        </pre>
        <div className="dialog-actions">
          <button type="button" ref={cancel} onClick={() => onAnswer(false)}>
            Cancel
          </button>
          <button type="button" className="danger" onClick={() => onAnswer(true)}>
            Run
          </button>
        </div>
      </div>
    </div>
  );
}
