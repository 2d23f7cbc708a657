// The one reader of SQL names written as text: a (possibly quoted, possibly qualified, possibly
// `[]`) name as PostgreSQL's regclassin, regtypein and the like read a string. The catalog
// filter reads a catalog function's constant argument with it (catalog-uses.ts), and the names
// PostgreSQL reads from string constants and type names (catalog-names.ts).

/** A name as PostgreSQL reads it from a string or a type name: its parts, and whether `[]`. */
export interface WrittenName {
  parts: string[];
  array: boolean;
}

const IDENT = /^[A-Za-z_\u0080-\uffff][A-Za-z0-9_$\u0080-\uffff]*/;

/**
 * A (possibly qualified, possibly `[]`) name as regclassin, regtypein and the like read a
 * string: identifiers (quoted or folded to lower case) joined by dots, spaces allowed around
 * them; null when the text is not one.
 */
export function readName(text: string): WrittenName | null {
  const s = text;
  const parts: string[] = [];
  let i = 0;
  const space = (): void => {
    while (i < s.length && /\s/.test(s[i]!)) i++;
  };
  space();
  for (;;) {
    if (s[i] === '"') {
      let j = i + 1;
      let part = '';
      for (;;) {
        if (j >= s.length) return null;
        if (s[j] === '"') {
          if (s[j + 1] === '"') {
            part += '"';
            j += 2;
            continue;
          }
          break;
        }
        part += s[j];
        j++;
      }
      if (part === '') return null;
      parts.push(part);
      i = j + 1;
    } else {
      const m = IDENT.exec(s.slice(i));
      if (!m) return null;
      parts.push(m[0].toLowerCase());
      i += m[0].length;
    }
    space();
    if (s[i] !== '.') break;
    i++;
    space();
  }
  let array = false;
  while (s[i] === '[') {
    const close = s.indexOf(']', i);
    if (close < 0 || !/^\s*\d*\s*$/.test(s.slice(i + 1, close))) return null;
    array = true;
    i = close + 1;
    space();
  }
  if (i !== s.length || parts.length > 3) return null;
  return { parts, array };
}

/**
 * A relation, type or schema name as a catalog function's text argument gives it (`a.b`,
 * `"A".b`): one or two parts, no `[]`; null when the text is not one.
 */
export function relationName(text: string): string[] | null {
  const name = readName(text);
  return name && !name.array && name.parts.length <= 2 ? name.parts : null;
}
