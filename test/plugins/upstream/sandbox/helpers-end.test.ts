import { readdir, readFile, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HOSTILE_UPSTREAM, startUpstreamWorld, until, type UpstreamWorld } from '../upstream-world.ts';

/**
 * The helpers of a confined server with a network grant (socat inside its
 * namespace, the proxy socket in Gatehouse) end with it: when the process dies
 * (and a new start gets new ones) and when the upstream is removed.
 */
let u: UpstreamWorld;

interface Proc {
  pid: number;
  ppid: number;
  args: string[];
}
async function processes(): Promise<Proc[]> {
  const out: Proc[] = [];
  for (const e of await readdir('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    const [status, cmd] = await Promise.all([
      readFile(`/proc/${e}/status`, 'utf8').catch(() => ''),
      readFile(`/proc/${e}/cmdline`, 'utf8').catch(() => ''),
    ]);
    const ppid = Number(/^PPid:\s+(\d+)$/m.exec(status)?.[1] ?? 0);
    if (cmd) out.push({ pid: Number(e), ppid, args: cmd.split('\0').filter(Boolean) });
  }
  return out;
}
/** Every process under upstream `id`'s bubblewrap (found by its private HOME), and the proxy socket it was given. */
async function sandboxOf(id: string): Promise<{ procs: Proc[]; socket: string | null }> {
  const all = await processes();
  const roots = all.filter(
    (p) => p.args[0]?.endsWith('bwrap') && p.args.some((a) => a.endsWith(`/sandbox/${id}/home`)),
  );
  const inside = new Set(roots.map((r) => r.pid));
  for (let grew = true; grew;) {
    grew = false;
    for (const p of all)
      if (!inside.has(p.pid) && inside.has(p.ppid)) {
        inside.add(p.pid);
        grew = true;
      }
  }
  const bind = roots[0]?.args.findIndex((a, i, l) => a === '--bind' && l[i + 2] === '/run/gatehouse/proxy.sock') ?? -1;
  return { procs: all.filter((p) => inside.has(p.pid)), socket: bind >= 0 ? roots[0]!.args[bind + 1]! : null };
}
const has = (procs: Proc[], name: string) => procs.some((p) => p.args[0]?.endsWith(name));
const gone = (p: string) =>
  stat(p).then(
    () => false,
    () => true,
  );

beforeAll(async () => {
  u = await startUpstreamWorld();
  await u.ok('POST', 'upstreams', {
    id: 'n',
    transport: {
      kind: 'stdio',
      command: process.execPath,
      args: [HOSTILE_UPSTREAM],
      sandbox: { net: ['localhost:9'] },
    },
  });
}, 120_000);
afterAll(async () => {
  await u?.stop();
});

describe('helpers end with their server', () => {
  it('socat and the proxy socket end when the server dies; the restart has new ones', async () => {
    const first = (await until(async () => {
      const s = await sandboxOf('n');
      return has(s.procs, 'socat') && has(s.procs, 'node') && s.socket ? s : null;
    }))!;
    expect((await stat(first.socket!)).isSocket()).toBe(true);
    const node = first.procs.find((p) => p.args[0]?.endsWith('node'))!;
    const socat = first.procs.find((p) => p.args[0]?.endsWith('socat'))!;
    process.kill(node.pid, 'SIGKILL');
    await until(async () => (await processes()).every((p) => p.pid !== socat.pid), 10_000, 'socat to end');
    await until(() => gone(dirname(first.socket!)), 10_000, 'the proxy socket to be removed');
    const second = (await until(async () => {
      const s = await sandboxOf('n');
      return has(s.procs, 'socat') && s.socket && s.socket !== first.socket ? s : null;
    }, 15_000))!;
    expect(second.procs.map((p) => p.pid)).not.toContain(socat.pid);
  });

  it('everything ends when the upstream is removed', async () => {
    const s = (await until(async () => {
      const x = await sandboxOf('n');
      return has(x.procs, 'socat') && x.socket ? x : null;
    }))!;
    await u.ok('DELETE', 'upstreams/n');
    await until(async () => (await sandboxOf('n')).procs.length === 0, 10_000, 'the sandbox to end');
    // bubblewrap goes first (its group is signalled), what ran inside it a moment later (--die-with-parent)
    await until(
      async () => {
        const left = new Set((await processes()).map((p) => p.pid));
        return s.procs.every((p) => !left.has(p.pid));
      },
      10_000,
      'every process of the sandbox to end',
    );
    await until(() => gone(dirname(s.socket!)), 10_000, 'the proxy socket to be removed');
  });
});
