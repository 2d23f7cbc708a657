// One message: the person's text, or the assistant's Markdown and tool steps in order.
import type { UIMessage } from 'ai';
import { Markdown } from './markdown';
import { isToolPart, ToolStep } from './tool-step';

export function MessageView({ message }: { message: UIMessage }) {
  if (message.role === 'user') {
    const text = message.parts.map((p) => (p.type === 'text' ? p.text : '')).join('');
    return (
      <article className="message user" aria-label="You">
        <p>{text}</p>
      </article>
    );
  }
  if (message.role !== 'assistant') return null;
  return (
    <article className="message assistant" aria-label="Assistant">
      {message.parts.map((part, i) => {
        if (part.type === 'text') return part.text ? <Markdown key={i} text={part.text} /> : null;
        if (part.type === 'reasoning') return null;
        if (isToolPart(part)) return <ToolStep key={part.toolCallId ?? i} part={part} />;
        return null;
      })}
    </article>
  );
}
