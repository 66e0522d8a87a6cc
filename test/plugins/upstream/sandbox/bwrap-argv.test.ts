import { describe, expect, it } from 'vitest';
import { bwrapArgv, INNER_PROXY_SOCKET, LAUNCHER } from '../../../../main/plugins/upstream/sandbox/bwrap-argv.ts';

const plan = {
  exec: '/usr/bin/node',
  args: ['/srv/pkg/index.js', '$(touch /tmp/pwned)', '; rm -rf ~'],
  system: [
    { path: '/usr', link: null },
    { path: '/bin', link: 'usr/bin' },
  ],
  readOnly: ['/srv/pkg', '/usr/bin'],
  symlinks: [],
  home: { path: '/home/ana', privateDir: '/home/ana/.config/Gatehouse/sandbox/fs/home' },
  read: [],
  write: [{ src: '/home/ana/notes', dest: '/home/ana/notes' }],
  cover: ['/home/ana/.config/Gatehouse'],
  cwd: '/home/ana',
  disableUserns: true,
  proxySocket: null,
};
const pairs = (a: string[], flag: string) => a.flatMap((x, i) => (x === flag ? [`${a[i + 1]} -> ${a[i + 2]}`] : []));

describe('the bubblewrap argv', () => {
  it("is an argv: the server's arguments reach it as they are, after --", () => {
    const a = bwrapArgv(plan);
    expect(a.slice(a.indexOf('--') + 1)).toEqual(['/usr/bin/node', ...plan.args]);
    expect(a).not.toContain('sh');
  });

  it('unshares everything, ends with Gatehouse, its own session, no capabilities, no nested user namespaces', () => {
    const a = bwrapArgv(plan);
    for (const f of ['--unshare-all', '--unshare-user', '--disable-userns', '--die-with-parent', '--new-session'])
      expect(a).toContain(f);
    expect(a.join(' ')).toContain('--cap-drop ALL');
    expect(bwrapArgv({ ...plan, disableUserns: false })).not.toContain('--disable-userns');
  });

  it('mounts an allowlist: the private HOME at HOME, the package read-only, the grant read-write, the data dir covered', () => {
    const a = bwrapArgv(plan);
    expect(pairs(a, '--bind')).toEqual([`${plan.home.privateDir} -> /home/ana`, '/home/ana/notes -> /home/ana/notes']);
    // /usr/bin is inside /usr already: mounted once
    expect(pairs(a, '--ro-bind')).toEqual(['/srv/pkg -> /srv/pkg']);
    expect(pairs(a, '--symlink')).toEqual(['usr/bin -> /bin']);
    // The data dir is under HOME, which is the private one here: no cover needed; under a grant it is covered.
    expect(a).not.toContain('/home/ana/.config/Gatehouse');
    const wide = bwrapArgv({
      ...plan,
      write: [{ src: '/home/ana', dest: '/home/ana' }],
      home: { ...plan.home, path: '/h' },
    });
    expect(wide.join(' ')).toContain('--tmpfs /home/ana/.config/Gatehouse');
    expect(a.indexOf('--tmpfs')).toBeLessThan(a.indexOf('--bind'));
    expect(a.join(' ')).toContain('--remount-ro / --chdir /home/ana --');
  });

  it('with a network grant: the proxy socket bound in and the fixed launcher in front, the server still an argv', () => {
    const a = bwrapArgv({ ...plan, proxySocket: '/tmp/gh-sbx-1/proxy.sock' });
    expect(pairs(a, '--bind')).toContain(`/tmp/gh-sbx-1/proxy.sock -> ${INNER_PROXY_SOCKET}`);
    const tail = a.slice(a.indexOf('--') + 1);
    expect(tail).toEqual(['/bin/sh', '-c', LAUNCHER, 'gatehouse-sandbox', '/usr/bin/node', ...plan.args]);
    // it waits for socat's listener (127.0.0.1:3128 in /proc/net/tcp) before exec, then execs "$@"
    expect(LAUNCHER).toContain(':0C38 00000000:0000 0A');
    expect(LAUNCHER.trim().endsWith('exec "$@"')).toBe(true);
  });
});
