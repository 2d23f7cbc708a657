import { fireEvent, render, screen } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import { ConversationList } from './conversation-list';

const conversations = [
  { id: 'conv_1', title: 'Orders by month' },
  { id: 'conv_2', title: 'Customer churn' },
];

function setup() {
  const handlers = {
    onNew: vi.fn(),
    onOpen: vi.fn(),
    onRename: vi.fn(async () => undefined),
    onDelete: vi.fn(async () => undefined),
    onDeleteAll: vi.fn(async () => undefined),
  };
  render(<ConversationList conversations={conversations} activeId="conv_2" {...handlers} />);
  return handlers;
}

describe('ConversationList', () => {
  it('searches by title and opens one', () => {
    const h = setup();
    fireEvent.change(screen.getByRole('searchbox'), { target: { value: 'churn' } });
    expect(screen.queryByText('Orders by month')).toBeNull();
    fireEvent.click(screen.getByRole('button', { name: 'Customer churn' }));
    expect(h.onOpen).toHaveBeenCalledWith('conv_2');
    fireEvent.change(screen.getByRole('searchbox'), { target: { value: 'zzz' } });
    expect(screen.getByText(/No title matches/)).toBeTruthy();
  });

  it('renames with Enter, deletes one, and deletes all after a confirmation', async () => {
    const h = setup();
    fireEvent.click(screen.getByRole('button', { name: 'Rename Orders by month' }));
    const input = screen.getByLabelText('New title');
    fireEvent.change(input, { target: { value: '  Monthly orders ' } });
    fireEvent.submit(input);
    await vi.waitFor(() => expect(h.onRename).toHaveBeenCalledWith('conv_1', 'Monthly orders'));
    fireEvent.click(screen.getByRole('button', { name: 'Delete Customer churn' }));
    expect(h.onDelete).toHaveBeenCalledWith('conv_2');
    fireEvent.click(screen.getByRole('button', { name: 'Delete all conversations' }));
    expect(h.onDeleteAll).not.toHaveBeenCalled();
    fireEvent.click(screen.getByRole('button', { name: 'Delete all' }));
    expect(h.onDeleteAll).toHaveBeenCalledOnce();
    fireEvent.click(screen.getByRole('button', { name: 'New conversation' }));
    expect(h.onNew).toHaveBeenCalledOnce();
  });
});
