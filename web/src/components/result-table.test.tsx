import { fireEvent, render, screen, within } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import { ResultTable } from './result-table';

const result = {
  columns: [
    { name: 'city', type: 'text' },
    { name: 'people', type: 'bigint' },
  ],
  rows: [
    ['Oslo', '700000'],
    ['Bergen', '290000'],
    ['Tromsø', null],
  ],
  rowCount: 3,
  truncated: true,
};

const column = (index: number) =>
  screen
    .getAllByRole('row')
    .slice(1)
    .map((row) => within(row).getAllByRole('cell')[index]!.textContent);

// jsdom's Blob has no text(); FileReader it has.
const readBlob = (blob: Blob) =>
  new Promise<string>((resolve) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result));
    reader.readAsText(blob);
  });

describe('ResultTable', () => {
  it('sorts by a column on click and reverses on a second click', () => {
    render(<ResultTable result={result} />);
    expect(screen.getByText(/3 rows \(more rows exist/)).toBeTruthy();
    const header = screen.getByRole('columnheader', { name: /people/ });
    expect(header.getAttribute('aria-sort')).toBe('none');
    fireEvent.click(within(header).getByRole('button'));
    expect(header.getAttribute('aria-sort')).toBe('ascending');
    expect(column(1)).toEqual(['290000', '700000', 'NULL']);
    fireEvent.click(within(header).getByRole('button'));
    expect(header.getAttribute('aria-sort')).toBe('descending');
    expect(column(0)).toEqual(['Oslo', 'Bergen', 'Tromsø']);
  });

  it('copies tab-separated rows and downloads CSV', async () => {
    const writeText = vi.fn(async () => undefined);
    Object.defineProperty(navigator, 'clipboard', { value: { writeText }, configurable: true });
    const created: Blob[] = [];
    URL.createObjectURL = vi.fn((blob: Blob) => {
      created.push(blob);
      return 'blob:csv';
    });
    URL.revokeObjectURL = vi.fn();
    const clicks: string[] = [];
    const click = vi.spyOn(HTMLAnchorElement.prototype, 'click').mockImplementation(function (
      this: HTMLAnchorElement,
    ) {
      clicks.push(this.download);
    });
    render(<ResultTable result={result} name="query_database" />);
    fireEvent.click(screen.getByRole('button', { name: 'Copy' }));
    expect(await screen.findByRole('status')).toHaveProperty(
      'textContent',
      'Copied to the clipboard.',
    );
    expect(writeText).toHaveBeenCalledWith('city\tpeople\nOslo\t700000\nBergen\t290000\nTromsø\t');
    fireEvent.click(screen.getByRole('button', { name: 'Download CSV' }));
    expect(clicks).toEqual(['query_database.csv']);
    expect(await readBlob(created[0]!)).toBe(
      'city,people\r\nOslo,700000\r\nBergen,290000\r\nTromsø,\r\n',
    );
    click.mockRestore();
  });
});
