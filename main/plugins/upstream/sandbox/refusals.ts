/**
 * A refusal by the sandbox looks like an ordinary error to the server
 * (ENOENT for a folder that is absent, EROFS for a read-only one). When a
 * server reports one on stderr naming a path outside what it was given, the
 * upstream's log gets a line saying so, so a person sees what it tried and
 * why it failed. Node's and Python's error texts name the path in quotes.
 */

const ERROR_WITH_PATH =
  /\b(ENOENT|EROFS|EACCES|EPERM|No such file or directory|Read-only file system|Permission denied)\b[^\n]*?['"](\/[^'"\n]{1,500})['"]/g;

const under = (p: string, dir: string) => p === dir || p.startsWith(dir.endsWith('/') ? dir : `${dir}/`);

export function refusalNote(stderr: string, visible: readonly string[]): string | null {
  const notes: string[] = [];
  for (const m of stderr.matchAll(ERROR_WITH_PATH)) {
    const path = m[2]!;
    const code = m[1]!;
    const readOnly = code === 'EROFS' || code === 'Read-only file system';
    if (!readOnly && visible.some((v) => under(path, v))) continue;
    notes.push(
      readOnly
        ? `gatehouse sandbox: refused a write to ${path} (read-only for this server; grant a folder with --allow-write DIR)`
        : `gatehouse sandbox: ${path} is outside what this server was granted, so it does not exist for it: it has its own HOME and temp, not yours (grant a folder with --allow-read DIR or --allow-write DIR)`,
    );
  }
  return notes.length ? [...new Set(notes)].join('\n') : null;
}
