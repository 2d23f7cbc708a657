// Name patterns with `*` as the only wildcard (deny-lists, access rules).

/** A pattern as an anchored regular expression (everything but `*` is literal). */
export function globToRegExp(pattern: string): RegExp {
  const body = pattern
    .split('*')
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*');
  return new RegExp(`^${body}$`);
}

/** A case-insensitive test of a name against a list of patterns. */
export function nameMatcher(patterns: readonly string[]): (name: string) => boolean {
  const exact = new Set<string>();
  const globs: RegExp[] = [];
  for (const raw of patterns) {
    const pattern = raw.toLowerCase();
    if (pattern.includes('*')) globs.push(globToRegExp(pattern));
    else exact.add(pattern);
  }
  return (name) => {
    const lower = name.toLowerCase();
    return exact.has(lower) || globs.some((re) => re.test(lower));
  };
}
