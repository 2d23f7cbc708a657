import { fireEvent, render, screen, within } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import { writeToken } from '../lib/session';
import { installFakeApi, json, streamOf, type Recorded } from '../testing/fake-api';
import { Chat } from './chat';

const settings = { provider: 'openai', model: 'gpt-test', database: 'demo' };

function renderChat() {
  const onConversation = vi.fn();
  const onFinished = vi.fn();
  render(
    <Chat
      chatId="conv_local"
      initialMessages={[]}
      settings={settings}
      onConversation={onConversation}
      onFinished={onFinished}
    />,
  );
  return { onConversation, onFinished, prompt: screen.getByLabelText('Your question') };
}

const rows = {
  isError: false,
  text: 'status\tn\nopen\t3\nclosed\t5',
  structuredContent: {
    columns: [
      { name: 'status', type: 'text' },
      { name: 'n', type: 'int4' },
    ],
    rows: [
      ['open', 3],
      ['closed', 5],
    ],
    rowCount: 2,
    truncated: false,
    nextOffset: null,
  },
};

describe('Chat', () => {
  it('sends on Enter (not Shift+Enter) with the settings and the bearer, and streams the answer', async () => {
    writeToken('session-token-1');
    const api = installFakeApi({
      'POST /api/chat': () =>
        streamOf(
          [
            { type: 'text-start', id: 't1' },
            { type: 'text-delta', id: 't1', delta: 'Orders **by status**:' },
            { type: 'text-end', id: 't1' },
            {
              type: 'tool-input-available',
              toolCallId: 'c1',
              toolName: 'query_database',
              input: { query: 'SELECT status, count(*) AS n FROM orders GROUP BY 1' },
            },
            { type: 'tool-output-available', toolCallId: 'c1', output: rows },
          ],
          {
            conversationId: 'conv_server',
            provider: 'openai',
            model: 'gpt-test',
            database: 'demo',
          },
        ),
    });
    const { prompt, onConversation, onFinished } = renderChat();
    fireEvent.change(prompt, { target: { value: 'Orders by status?' } });
    fireEvent.keyDown(prompt, { key: 'Enter', shiftKey: true });
    expect(api.requests).toHaveLength(0);
    fireEvent.keyDown(prompt, { key: 'Enter' });
    expect(await screen.findByText('by status')).toBeTruthy();
    expect(await screen.findByRole('img', { name: 'Bar chart of n by status' })).toBeTruthy();
    expect(screen.getByText('SELECT status, count(*) AS n FROM orders GROUP BY 1')).toBeTruthy();
    await vi.waitFor(() => expect(onFinished).toHaveBeenCalled());
    expect(onConversation).toHaveBeenCalledWith('conv_server');
    const sent = api.requests[0]!;
    expect(sent.headers.get('authorization')).toBe('Bearer session-token-1');
    expect(sent.body).toMatchObject({
      id: 'conv_local',
      provider: 'openai',
      model: 'gpt-test',
      database: 'demo',
      trigger: 'submit-message',
    });
    expect((sent.body as { messages: unknown[] }).messages).toHaveLength(1);
  });

  it('asks before a write and sends the answer back; the model cannot approve it', async () => {
    let turn = 0;
    const api = installFakeApi({
      'POST /api/chat': (request: Recorded) => {
        turn += 1;
        if (turn === 1) {
          return streamOf([
            {
              type: 'tool-input-available',
              toolCallId: 'w1',
              toolName: 'query_database',
              input: { query: "UPDATE orders SET status = 'closed' WHERE id = 7" },
            },
            { type: 'tool-approval-request', toolCallId: 'w1', approvalId: 'ap1' },
          ]);
        }
        const last = (
          request.body as {
            messages: { parts: { type: string; state?: string; approval?: unknown }[] }[];
          }
        ).messages.at(-1)!;
        const step = last.parts.find((p) => p.type === 'tool-query_database')!;
        expect(step.state).toBe('approval-responded');
        expect(step.approval).toMatchObject({ id: 'ap1', approved: true });
        return streamOf([
          {
            type: 'tool-output-available',
            toolCallId: 'w1',
            output: {
              isError: false,
              text: 'UPDATE 1',
              structuredContent: {
                columns: [],
                rows: [],
                rowCount: 1,
                truncated: false,
                nextOffset: null,
                command: 'UPDATE',
              },
            },
          },
          { type: 'text-start', id: 't2' },
          { type: 'text-delta', id: 't2', delta: 'Done: one order closed.' },
          { type: 'text-end', id: 't2' },
        ]);
      },
    });
    const { prompt } = renderChat();
    fireEvent.change(prompt, { target: { value: 'Close order 7' } });
    fireEvent.submit(prompt.closest('form')!);
    const dialog = await screen.findByRole('alertdialog', { name: 'Run this statement?' });
    expect(
      within(dialog).getByText("UPDATE orders SET status = 'closed' WHERE id = 7"),
    ).toBeTruthy();
    expect(api.requests).toHaveLength(1);
    fireEvent.click(within(dialog).getByRole('button', { name: 'Run' }));
    expect(await screen.findByText('Done: one order closed.')).toBeTruthy();
    expect(screen.queryByRole('alertdialog')).toBeNull();
    expect(screen.getByText('UPDATE 1')).toBeTruthy();
    expect(api.requests).toHaveLength(2);
  });

  it('refuses a write with Esc', async () => {
    let turn = 0;
    const api = installFakeApi({
      'POST /api/chat': (request: Recorded) => {
        turn += 1;
        if (turn === 1) {
          return streamOf([
            {
              type: 'tool-input-available',
              toolCallId: 'w1',
              toolName: 'query_database',
              input: { query: 'DELETE FROM orders' },
            },
            { type: 'tool-approval-request', toolCallId: 'w1', approvalId: 'ap1' },
          ]);
        }
        const last = (
          request.body as { messages: { parts: { type: string; approval?: unknown }[] }[] }
        ).messages.at(-1)!;
        expect(last.parts.find((p) => p.type === 'tool-query_database')?.approval).toMatchObject({
          approved: false,
        });
        return streamOf([
          { type: 'tool-output-denied', toolCallId: 'w1' },
          { type: 'text-start', id: 't' },
          { type: 'text-delta', id: 't', delta: 'Understood, nothing was deleted.' },
          { type: 'text-end', id: 't' },
        ]);
      },
    });
    const { prompt } = renderChat();
    fireEvent.change(prompt, { target: { value: 'Delete all orders' } });
    fireEvent.keyDown(prompt, { key: 'Enter' });
    await screen.findByRole('alertdialog');
    fireEvent.keyDown(window, { key: 'Escape' });
    expect(await screen.findByText('Understood, nothing was deleted.')).toBeTruthy();
    expect(screen.getByText(/You refused this statement/)).toBeTruthy();
    expect(api.requests).toHaveLength(2);
  });

  it('stops a running answer with Esc', async () => {
    let aborted = false;
    installFakeApi({
      'POST /api/chat': (request) => {
        // An answer that starts and then waits until the client goes away.
        const encoder = new TextEncoder();
        const body = new ReadableStream<Uint8Array>({
          start(controller) {
            controller.enqueue(encoder.encode('data: {"type":"start"}\n\n'));
            controller.enqueue(encoder.encode('data: {"type":"text-start","id":"t"}\n\n'));
            controller.enqueue(
              encoder.encode('data: {"type":"text-delta","id":"t","delta":"Counting rows"}\n\n'),
            );
            request.signal?.addEventListener('abort', () => {
              aborted = true;
              controller.error(new DOMException('aborted', 'AbortError'));
            });
          },
        });
        return new Response(body, {
          headers: { 'content-type': 'text/event-stream', 'x-vercel-ai-ui-message-stream': 'v1' },
        });
      },
    });
    const { prompt } = renderChat();
    fireEvent.change(prompt, { target: { value: 'Count everything' } });
    fireEvent.keyDown(prompt, { key: 'Enter' });
    await screen.findByText('Counting rows');
    expect(screen.getByRole('button', { name: 'Stop' })).toBeTruthy();
    fireEvent.keyDown(window, { key: 'Escape' });
    await screen.findByRole('button', { name: 'Send' });
    expect(aborted).toBe(true);
  });

  it('shows refusals before the stream and errors inside it in plain words', async () => {
    let turn = 0;
    installFakeApi({
      'POST /api/chat': () => {
        turn += 1;
        if (turn === 1) return json(429, { error: 'Rate limit exceeded, retry in 12 seconds' });
        return streamOf([
          { type: 'error', errorText: 'The database is unavailable: connection refused.' },
        ]);
      },
    });
    const { prompt } = renderChat();
    fireEvent.change(prompt, { target: { value: 'hello' } });
    fireEvent.keyDown(prompt, { key: 'Enter' });
    expect((await screen.findByRole('alert')).textContent).toMatch(/Too many requests/);
    fireEvent.change(prompt, { target: { value: 'again' } });
    fireEvent.keyDown(prompt, { key: 'Enter' });
    expect((await screen.findByRole('alert')).textContent).toMatch(
      /The database is unavailable: connection refused\./,
    );
  });
});
