// The model's Markdown as React elements, from marked's lexer. Nothing of the model's text ever
// becomes HTML: raw HTML shows as text, links keep only http(s) and mailto, images stay links.
import { marked, type Token, type Tokens } from 'marked';
import { Fragment, type ReactNode } from 'react';

const SAFE_LINK = /^(https?:|mailto:)/i;

function inline(tokens: readonly Token[] | undefined, key = ''): ReactNode[] {
  return (tokens ?? []).map((token, i) => renderInline(token, `${key}${i}`));
}

function renderInline(token: Token, key: string): ReactNode {
  switch (token.type) {
    case 'strong':
      return <strong key={key}>{inline((token as Tokens.Strong).tokens, key)}</strong>;
    case 'em':
      return <em key={key}>{inline((token as Tokens.Em).tokens, key)}</em>;
    case 'del':
      return <del key={key}>{inline((token as Tokens.Del).tokens, key)}</del>;
    case 'codespan':
      return <code key={key}>{(token as Tokens.Codespan).text}</code>;
    case 'br':
      return <br key={key} />;
    case 'link': {
      const link = token as Tokens.Link;
      if (!SAFE_LINK.test(link.href))
        return <Fragment key={key}>{inline(link.tokens, key)}</Fragment>;
      return (
        <a key={key} href={link.href} target="_blank" rel="noopener noreferrer">
          {inline(link.tokens, key)}
        </a>
      );
    }
    case 'image': {
      const image = token as Tokens.Image;
      return SAFE_LINK.test(image.href) ? (
        <a key={key} href={image.href} target="_blank" rel="noopener noreferrer">
          {image.text || image.href}
        </a>
      ) : (
        <Fragment key={key}>{image.text}</Fragment>
      );
    }
    case 'text': {
      const text = token as Tokens.Text;
      return text.tokens ? (
        <Fragment key={key}>{inline(text.tokens, key)}</Fragment>
      ) : (
        <Fragment key={key}>{text.text}</Fragment>
      );
    }
    case 'escape':
      return <Fragment key={key}>{(token as Tokens.Escape).text}</Fragment>;
    case 'checkbox':
      return null;
    default:
      // html and anything unknown: as the characters the model wrote.
      return <Fragment key={key}>{'raw' in token ? token.raw : ''}</Fragment>;
  }
}

function block(token: Token, key: string): ReactNode {
  switch (token.type) {
    case 'space':
    case 'def':
    case 'checkbox':
      return null;
    case 'heading': {
      const heading = token as Tokens.Heading;
      // Headings inside an answer never outrank the page's own.
      const level = Math.min(6, heading.depth + 2);
      const Tag = `h${level}` as 'h3';
      return <Tag key={key}>{inline(heading.tokens, key)}</Tag>;
    }
    case 'paragraph':
      return <p key={key}>{inline((token as Tokens.Paragraph).tokens, key)}</p>;
    case 'code':
      return (
        <pre key={key} className="code-block">
          <code>{(token as Tokens.Code).text}</code>
        </pre>
      );
    case 'blockquote':
      return (
        <blockquote key={key}>
          {(token as Tokens.Blockquote).tokens.map((t, i) => block(t, `${key}-${i}`))}
        </blockquote>
      );
    case 'list': {
      const list = token as Tokens.List;
      const items = list.items.map((item, i) => (
        <li key={i}>
          {item.task ? (
            <input type="checkbox" checked={item.checked ?? false} readOnly disabled />
          ) : null}
          {item.tokens.map((t, j) =>
            t.type === 'text' ? renderInline(t, `${key}-${i}-${j}`) : block(t, `${key}-${i}-${j}`),
          )}
        </li>
      ));
      return list.ordered ? (
        <ol key={key} start={typeof list.start === 'number' ? list.start : undefined}>
          {items}
        </ol>
      ) : (
        <ul key={key}>{items}</ul>
      );
    }
    case 'table': {
      const table = token as Tokens.Table;
      return (
        <div key={key} className="md-table">
          <table>
            <thead>
              <tr>
                {table.header.map((cell, i) => (
                  <th key={i}>{inline(cell.tokens, `${key}h${i}`)}</th>
                ))}
              </tr>
            </thead>
            <tbody>
              {table.rows.map((row, r) => (
                <tr key={r}>
                  {row.map((cell, c) => (
                    <td key={c}>{inline(cell.tokens, `${key}r${r}c${c}`)}</td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      );
    }
    case 'hr':
      return <hr key={key} />;
    case 'text': {
      const text = token as Tokens.Text;
      return <p key={key}>{text.tokens ? inline(text.tokens, key) : text.text}</p>;
    }
    default:
      return <p key={key}>{'raw' in token ? token.raw : ''}</p>;
  }
}

export function Markdown({ text }: { text: string }) {
  const tokens = marked.lexer(text, { gfm: true, breaks: false });
  return <div className="markdown">{tokens.map((t, i) => block(t, String(i)))}</div>;
}
