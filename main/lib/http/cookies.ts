/**
 * `Cookie` header -> name/value pairs. Any page on another local port can set
 * cookies for this host (cookies are not port-scoped), so nothing here may
 * throw: a malformed percent-escape keeps the raw value, a name like
 * `__proto__` is just a name (null prototype), and only the first value of a
 * repeated name counts (RFC 6265: the most specific path comes first).
 */
export function parseCookies(header: string | undefined): Record<string, string> {
  const out = Object.create(null) as Record<string, string>;
  if (!header) return out;
  for (const part of header.split(';')) {
    const i = part.indexOf('=');
    if (i <= 0) continue;
    const name = part.slice(0, i).trim();
    if (!name || name in out) continue;
    out[name] = decodeCookieValue(part.slice(i + 1).trim());
  }
  return out;
}

function decodeCookieValue(raw: string): string {
  const unquoted = raw.length >= 2 && raw.startsWith('"') && raw.endsWith('"') ? raw.slice(1, -1) : raw;
  if (!unquoted.includes('%')) return unquoted;
  try {
    return decodeURIComponent(unquoted);
  } catch {
    return unquoted;
  }
}
