// One question and everything it sets off: the streamed answer, write approvals asked of the
// person (or refused, when nobody can be asked), and the re-sends that carry their answers.
import type { PendingApproval, TurnResult } from './session.js';
import type { ChatContext } from './context.js';

/** Asks whether to run a write; resolves false when the person says no or cannot be asked. */
export type Confirm = (approval: PendingApproval) => Promise<boolean>;

export async function runTurn(
  question: string,
  context: ChatContext,
  confirm: Confirm,
): Promise<TurnResult> {
  const { session, term, printer } = context;
  term.spinner.start('thinking…');
  let result = await session.ask(question);
  for (;;) {
    if (result.error || result.aborted) break;
    const pending = session.pendingApprovals();
    if (pending.length === 0) break;
    const answers: { id: string; approved: boolean }[] = [];
    for (const approval of pending) {
      term.spinner.stop();
      answers.push({ id: approval.id, approved: await confirm(approval) });
    }
    term.spinner.start('running…');
    result = await session.answerApprovals(answers);
  }
  const messages = session.messages;
  const last = messages[messages.length - 1];
  if (last) printer.update(last, messages.length - 1, true);
  term.spinner.stop();
  if (result.aborted) term.note('(stopped)');
  if (result.error) term.error(result.error);
  return result;
}
