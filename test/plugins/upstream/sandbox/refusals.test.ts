import { describe, expect, it } from 'vitest';
import { refusalNote } from '../../../../main/plugins/upstream/sandbox/refusals.ts';

/** What a confined server's own error text says about a refused file access or connection, as its log line. */
const visible = ['/usr', '/home/ana/notes', '/srv/app/node_modules'];
const hidden = (p: string) =>
  `gatehouse sandbox: ${p} is outside what this server was granted, so it does not exist for it: it has its own HOME and temp, not yours (grant a folder with --allow-read DIR or --allow-write DIR)`;
const readOnly = (p: string) =>
  `gatehouse sandbox: refused a write to ${p} (read-only for this server; grant a folder with --allow-write DIR)`;

describe('refusalNote', () => {
  it("Node's errors: ENOENT under a hidden path, EROFS anywhere", () => {
    expect(refusalNote("Error: ENOENT: no such file or directory, open '/home/ana/.ssh/id_rsa'", visible)).toBe(
      hidden('/home/ana/.ssh/id_rsa'),
    );
    expect(refusalNote("EROFS: read-only file system, open '/srv/app/node_modules/x/memory.jsonl'", visible)).toBe(
      readOnly('/srv/app/node_modules/x/memory.jsonl'),
    );
  });

  it('an ordinary error on a path it was given is not a refusal', () => {
    expect(refusalNote("ENOENT: no such file or directory, open '/home/ana/notes/missing.txt'", visible)).toBeNull();
    expect(refusalNote("EACCES: permission denied, open '/usr/lib/secret'", visible)).toBeNull();
  });

  it("Python's and Go's wording", () => {
    expect(refusalNote("PermissionError: [Errno 13] Permission denied: '/home/ana/.aws/credentials'", visible)).toBe(
      hidden('/home/ana/.aws/credentials'),
    );
    expect(refusalNote("OSError: [Errno 30] Read-only file system: '/usr/share/x'", visible)).toBe(
      readOnly('/usr/share/x'),
    );
    expect(refusalNote('failed: open /home/ana/.config/gh/hosts.yml: no such file or directory', visible)).toBe(
      hidden('/home/ana/.config/gh/hosts.yml'),
    );
    expect(refusalNote('mkdir /usr/local/cache: read-only file system', visible)).toBe(readOnly('/usr/local/cache'));
    expect(refusalNote('open /home/ana/notes/a.txt: no such file or directory', visible)).toBeNull();
  });

  it('a direct connection, each refusal once', () => {
    const note = refusalNote('connect ECONNREFUSED 127.0.0.1:5432\nconnect ECONNREFUSED 127.0.0.1:5432', visible);
    expect(note).toBe(
      "gatehouse sandbox: refused a direct connection to 127.0.0.1:5432 (it has no network of its own: granted hosts only, through Gatehouse's proxy; grant one with --allow-net HOST:PORT)",
    );
    expect(refusalNote('all fine', visible)).toBeNull();
  });
});
