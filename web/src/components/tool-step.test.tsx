import { render, screen } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { ToolStep } from './tool-step';

describe('ToolStep', () => {
  it('shows the SQL, the rows and a chart for a series', () => {
    render(
      <ToolStep
        part={{
          type: 'tool-query_database',
          toolCallId: 'c1',
          state: 'output-available',
          input: { query: 'SELECT month, orders FROM monthly' },
          output: {
            isError: false,
            text: 'month\torders\n…',
            structuredContent: {
              columns: [
                { name: 'month', type: 'date' },
                { name: 'orders', type: 'int8' },
              ],
              rows: [
                ['2024-01-01', '3'],
                ['2024-02-01', '5'],
              ],
              rowCount: 2,
              truncated: false,
              nextOffset: null,
            },
          },
        }}
      />,
    );
    expect(screen.getByText('query_database')).toBeTruthy();
    expect(screen.getByText('SELECT month, orders FROM monthly')).toBeTruthy();
    expect(screen.getAllByRole('row')).toHaveLength(3);
    expect(screen.getByRole('img', { name: 'Line chart of orders by month' })).toBeTruthy();
  });

  it('says in words when the tool failed or the person refused', () => {
    const { rerender } = render(
      <ToolStep
        part={{
          type: 'tool-query_database',
          toolCallId: 'c2',
          state: 'output-available',
          input: { query: 'SELECT * FROM nope' },
          output: { isError: true, text: 'relation "nope" does not exist (SQLSTATE 42P01)' },
        }}
      />,
    );
    expect(screen.getByText(/relation "nope" does not exist/)).toBeTruthy();
    expect(screen.getByText('failed')).toBeTruthy();
    rerender(
      <ToolStep
        part={{
          type: 'tool-query_database',
          toolCallId: 'c3',
          state: 'output-denied',
          input: { query: 'DELETE FROM t' },
          approval: { id: 'a1', approved: false },
        }}
      />,
    );
    expect(screen.getByText(/You refused this statement/)).toBeTruthy();
  });
});
