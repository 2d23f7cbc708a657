// Simple RFC 6570 level-1 matching for resource templates: `{name}` matches one path
// segment (no '/'), `{+name}` matches the rest including '/'. Enough for pg:// and test://.

export function compileUriTemplate(
  template: string,
): (uri: string) => Record<string, string> | null {
  const names: string[] = [];
  let pattern = '^';
  let last = 0;
  for (const m of template.matchAll(/\{(\+?)([A-Za-z0-9_]+)\}/g)) {
    pattern += escapeRegExp(template.slice(last, m.index));
    pattern += m[1] === '+' ? '(.+)' : '([^/?#]+)';
    names.push(m[2] as string);
    last = m.index + m[0].length;
  }
  pattern += escapeRegExp(template.slice(last)) + '$';
  const re = new RegExp(pattern);
  return (uri) => {
    const m = re.exec(uri);
    if (!m) return null;
    const vars: Record<string, string> = {};
    names.forEach((name, i) => {
      vars[name] = safeDecode(m[i + 1] as string);
    });
    return vars;
  };
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
