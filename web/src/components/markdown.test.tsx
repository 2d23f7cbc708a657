import { render, screen } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { Markdown } from './markdown';

describe('Markdown', () => {
  it('renders headings, lists, code and tables as elements', () => {
    const { container } = render(
      <Markdown
        text={
          '# Orders\n\nThere are **12** orders:\n\n- open\n- closed\n\n```sql\nSELECT 1;\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |'
        }
      />,
    );
    expect(screen.getByRole('heading', { name: 'Orders' }).tagName).toBe('H3');
    expect(container.querySelector('strong')?.textContent).toBe('12');
    expect(screen.getAllByRole('listitem').map((li) => li.textContent)).toEqual(['open', 'closed']);
    expect(container.querySelector('pre code')?.textContent).toBe('SELECT 1;');
    expect(screen.getByRole('cell', { name: '2' })).toBeTruthy();
  });

  it('never turns the model’s HTML into markup and drops unsafe links', () => {
    const { container } = render(
      <Markdown
        text={
          '<img src=x onerror="alert(1)"> and [click](javascript:alert(1)) and [docs](https://example.com)'
        }
      />,
    );
    expect(container.querySelector('img')).toBeNull();
    expect(container.textContent).toContain('<img src=x onerror="alert(1)">');
    const links = container.querySelectorAll('a');
    expect(links).toHaveLength(1);
    expect(links[0]!.getAttribute('href')).toBe('https://example.com');
    expect(links[0]!.getAttribute('rel')).toBe('noopener noreferrer');
    expect(container.textContent).toContain('click');
  });
});
