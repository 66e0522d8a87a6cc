/**
 * A refusal by the sandbox looks like an ordinary error to the server
 * (ENOENT for a folder that is absent, EROFS for a read-only one). When a
 * server reports one on stderr naming a path outside what it was given, the
 * upstream's log gets a line saying so, so a person sees what it tried and
 * why it failed. Node's and Python's error texts name the path in quotes,
 * Go's before a colon. The server's stderr and its tool errors are all there
 * is to read: bubblewrap logs no denial (docs/decisions.md).
 */

const ERROR_WITH_PATH =
  /\b(ENOENT|EROFS|EACCES|EPERM|No such file or directory|Read-only file system|Permission denied)\b[^\n]*?['"](\/[^'"\n]{1,500})['"]/g;

/** Go's `*PathError` (`open /home/u/.ssh/id_rsa: no such file or directory`): the path unquoted before the error. */
const GO_PATH_ERROR =
  /\b(?:open|stat|lstat|mkdir|create|remove|rename|readlink|chdir|symlink|link|truncate) (\/[^\s:'"]{1,500}): (no such file or directory|read-only file system|permission denied|operation not permitted)\b/g;

const DIRECT_NET = /\b(ECONNREFUSED|ENETUNREACH|EAI_AGAIN|ENOTFOUND) ([A-Za-z0-9.:[\]-]{1,300})/g;

const under = (p: string, dir: string) => p === dir || p.startsWith(dir.endsWith('/') ? dir : `${dir}/`);

export function refusalNote(stderr: string, visible: readonly string[]): string | null {
  const notes: string[] = [];
  const found = [
    ...[...stderr.matchAll(ERROR_WITH_PATH)].map((m) => ({ code: m[1]!, path: m[2]! })),
    ...[...stderr.matchAll(GO_PATH_ERROR)].map((m) => ({ code: m[2]!, path: m[1]! })),
  ];
  for (const { code, path } of found) {
    const readOnly = /^(EROFS|read-only file system)$/i.test(code);
    if (!readOnly && visible.some((v) => under(path, v))) continue;
    notes.push(
      readOnly
        ? `gatehouse sandbox: refused a write to ${path} (read-only for this server; grant a folder with --allow-write DIR)`
        : `gatehouse sandbox: ${path} is outside what this server was granted, so it does not exist for it: it has its own HOME and temp, not yours (grant a folder with --allow-read DIR or --allow-write DIR)`,
    );
  }
  // Its own network namespace has nothing but its loopback: a direct connection or a name lookup fails there.
  for (const m of stderr.matchAll(DIRECT_NET))
    notes.push(
      `gatehouse sandbox: ${m[1] === 'ECONNREFUSED' || m[1] === 'ENETUNREACH' ? 'refused a direct connection to' : 'no name lookup for'} ${m[2]} (it has no network of its own: granted hosts only, through Gatehouse's proxy; grant one with --allow-net HOST:PORT)`,
    );
  return notes.length ? [...new Set(notes)].join('\n') : null;
}
