import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from './cli-harness.ts';

// bin/compile-cache.cjs: the commands keep V8's compiled code in the user's own private cache folder, so a second
// start skips compiling the bundle; never in a shared folder, and never where NODE_COMPILE_CACHE says otherwise.
let home: string;
beforeAll(async () => {
  home = await mkdtemp(join(tmpdir(), 'gh-ccache-'));
});
afterAll(async () => {
  await rm(home, { recursive: true, force: true });
});

const cacheDir = (base: string) => join(base, 'gatehouse', 'node-compile-cache');
const env = (extra: NodeJS.ProcessEnv) => ({ NODE_COMPILE_CACHE: '', XDG_CACHE_HOME: '', ...extra });

describe.skipIf(process.platform !== 'linux')('the compile cache of the gatehouse command', () => {
  it('is kept in ~/.cache/gatehouse, private to the user, and filled by a command', async () => {
    const r = await runCli(['--help'], env({ HOME: home }));
    expect(r.code, r.stderr).toBe(0);
    const dir = cacheDir(join(home, '.cache'));
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
    // Node keeps its entries in a folder per Node version and V8 flags, inside ours.
    const [versioned] = await readdir(dir);
    expect(versioned).toBeTruthy();
    expect((await readdir(join(dir, versioned!))).length).toBeGreaterThan(0);
  });

  it('follows XDG_CACHE_HOME', async () => {
    const xdg = join(home, 'xdg');
    const r = await runCli(['--help'], env({ HOME: home, XDG_CACHE_HOME: xdg }));
    expect(r.code, r.stderr).toBe(0);
    expect((await stat(cacheDir(xdg))).mode & 0o777).toBe(0o700);
  });

  it('is left where NODE_COMPILE_CACHE puts it', async () => {
    const own = join(home, 'own-cache');
    const other = await mkdtemp(join(tmpdir(), 'gh-ccache-home-'));
    try {
      const r = await runCli(['--help'], env({ HOME: other, NODE_COMPILE_CACHE: own }));
      expect(r.code, r.stderr).toBe(0);
      expect((await readdir(own)).length).toBeGreaterThan(0);
      await expect(stat(cacheDir(join(other, '.cache')))).rejects.toThrow(/ENOENT/);
    } finally {
      await rm(other, { recursive: true, force: true });
    }
  });
});
