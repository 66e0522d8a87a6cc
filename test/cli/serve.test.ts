import { existsSync } from 'node:fs';
import { readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { MCP_PATH } from '../../main/contract/health.ts';
import { connectClient } from '../helpers/service.ts';
import { cleanedUp, cliJson, cliJsonError, dirArgs, runCli, spawnCli, type Served } from './cli-harness.ts';

// Every step here is a child process loading the CLI through tsx: seconds each on a busy two-core machine.
vi.setConfig({ testTimeout: 180_000, hookTimeout: 120_000 });

// `gatehouse serve` as a real child process: what it prints, runtime.json,
// GET /, a clean stop on SIGINT and SIGTERM, and a second serve on the same dir.

const scope = cleanedUp();

async function freshServe(extra: string[] = []): Promise<{ dir: string; svc: Served }> {
  const dir = await scope.dir();
  return { dir, svc: await scope.serve(dir, extra) };
}

const readJson = async <T>(file: string): Promise<T> => JSON.parse(await readFile(file, 'utf8')) as T;

describe('gatehouse serve', () => {
  it('prints its addresses, writes runtime.json, answers GET /, refuses a second serve, and on SIGINT flushes, cleans up and exits 0', async () => {
    const { dir, svc } = await freshServe();
    const { info } = svc;
    expect(info.base_url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(info.base_url).not.toMatch(/:0$/);
    expect(info.mcp_url).toBe(`${info.base_url}${MCP_PATH}`);
    expect(info.console_login_url).toMatch(new RegExp(`^${info.base_url}/console/login\\?code=[A-Za-z0-9_-]{20,}$`));
    expect(info.data_dir).toBe(dir);
    expect(info.vault).toBe('file (not encrypted)');
    expect(info.enabled).toBe(true);
    expect(info.pid).toBe(svc.child.pid);

    const runtime = await readJson<Record<string, unknown>>(join(dir, 'runtime.json'));
    expect(runtime).toMatchObject({
      pid: svc.child.pid,
      base_url: info.base_url,
      mcp_url: info.mcp_url,
      console_url: `${info.base_url}/console/`,
    });

    const res = await fetch(`${info.base_url}/`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/application\/json/);
    const root = (await res.json()) as Record<string, unknown>;
    expect(root).toMatchObject({
      name: 'gatehouse',
      base_url: info.base_url,
      mcp_url: info.mcp_url,
      console_url: `${info.base_url}/console/`,
    });
    expect(typeof root.version).toBe('string');

    // The printed login link is one-time: it opens a session once, then is spent.
    const login = await fetch(info.console_login_url, { redirect: 'manual' });
    expect(login.status).toBe(302);
    expect(login.headers.get('set-cookie')).toMatch(/gatehouse_session=/);
    expect((await fetch(info.console_login_url, { redirect: 'manual' })).status).toBe(401);

    // A second serve on the same data dir fails clearly and leaves the first alone.
    const lockBefore = await readFile(join(dir, 'gatehouse.lock'), 'utf8');
    const second = await cliJsonError(dir, ['serve', '--port', '0']);
    expect(second.exit).toBe(1);
    expect(second.code).toBe('store_locked');
    expect(second.message).toContain(`pid ${svc.child.pid}`);
    const human = await runCli(['serve', '--port', '0', ...dirArgs(dir)]);
    expect(human.code).toBe(1);
    expect(human.stdout).toBe('');
    expect(human.stderr).toMatch(/another Gatehouse process \(pid \d+, service\) holds .*\[store_locked\]/);
    expect(await readFile(join(dir, 'gatehouse.lock'), 'utf8')).toBe(lockBefore);
    expect((await readJson<{ pid: number }>(join(dir, 'runtime.json'))).pid).toBe(svc.child.pid);
    expect((await fetch(`${info.base_url}/`)).status).toBe(200);
    expect(svc.child.exitCode).toBeNull();

    // Work that lives in memory until a flush: tool-call stats (folded every few seconds) and audit batches.
    const { token } = await cliJson<{ token: string }>(dir, ['tokens', 'create', '--label', 'flush-check']);
    const client = await connectClient(info.mcp_url, token);
    for (let i = 0; i < 3; i++)
      expect((await client.callTool({ name: 'site_identity', arguments: {} })).isError).toBeFalsy();
    await client.close();

    const stopped = await svc.stop('SIGINT');
    expect(stopped).toEqual({ code: 0, signal: null, killed: false });
    expect(existsSync(join(dir, 'runtime.json'))).toBe(false);
    expect(existsSync(join(dir, 'gatehouse.lock'))).toBe(false);
    const options = await readJson<{ stats: { tools: Record<string, Record<string, number>> } }>(
      join(dir, 'options.json'),
    );
    expect(options.stats.tools.site_identity?.ok).toBe(3);
    const logs = (await readdir(join(dir, 'audit'))).filter((f) => f.endsWith('.jsonl'));
    const lines = (await Promise.all(logs.map((f) => readFile(join(dir, 'audit', f), 'utf8'))))
      .join('')
      .split('\n')
      .filter(Boolean);
    expect(lines.map((l) => JSON.parse(l) as { tool: string }).filter((e) => e.tool === 'site_identity')).toHaveLength(
      3,
    );

    // The lock is free: a CLI command now works on the files directly and sees the flushed entries.
    const page = await cliJson<{ entries: Array<{ tool: string; result: string }> }>(dir, [
      'audit',
      'list',
      '--tool',
      'site_identity',
    ]);
    expect(page.entries.map((e) => e.result)).toEqual(['ok', 'ok', 'ok']);
  });

  it('on SIGTERM removes runtime.json, releases the lock and exits 0', async () => {
    const { dir, svc } = await freshServe();
    expect(existsSync(join(dir, 'runtime.json'))).toBe(true);
    await cliJson(dir, ['settings', 'set', 'rate_limit', '77']);
    const stopped = await svc.stop('SIGTERM');
    expect(stopped).toEqual({ code: 0, signal: null, killed: false });
    expect(existsSync(join(dir, 'runtime.json'))).toBe(false);
    expect(existsSync(join(dir, 'gatehouse.lock'))).toBe(false);
    expect((await readJson<{ settings: { rate_limit: number } }>(join(dir, 'options.json'))).settings.rate_limit).toBe(
      77,
    );
    await expect(fetch(`${svc.info.base_url}/`)).rejects.toThrow();
  });

  it('the human output names every address, the data dir and the vault', async () => {
    const dir = await scope.dir();
    const child = spawnCli(['serve', '--port', '0', ...dirArgs(dir)]);
    child.stdin.end();
    let out = '';
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (c: Buffer) => {
        out += c.toString('utf8');
        if (out.includes('Stop with Ctrl+C.')) resolve();
      });
      child.once('exit', (code) => reject(new Error(`serve exited ${code}: ${out}`)));
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill('SIGINT');
    const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
    expect(await exited).toBe(0);
    clearTimeout(timer);
    expect(out).toMatch(/base URL: +http:\/\/127\.0\.0\.1:\d+/);
    expect(out).toMatch(new RegExp(`MCP endpoint: +http://127\\.0\\.0\\.1:\\d+${MCP_PATH.replace(/\//g, '\\/')}`));
    expect(out).toMatch(/console login: +http:\/\/127\.0\.0\.1:\d+\/console\/login\?code=\S+ +\(one-time link\)/);
    expect(out).toContain(`data dir:      ${dir}`);
    expect(out).toContain('vault:         file (not encrypted)');
    // Without --enable the gateway starts switched off, and says how to switch it on.
    expect(out).toMatch(/gateway: +off/);
  });

  it('bad serve flags exit 2 with a usage line and start nothing', async () => {
    const dir = await scope.dir();
    const cases = [['--port', 'abc'], ['--port', '70000'], ['--vault', 'cloud'], ['--bogus']];
    const results = await Promise.all(cases.map((args) => runCli(['serve', '--data-dir', dir, ...args])));
    for (const [i, r] of results.entries()) {
      expect(r.code, cases[i]!.join(' ')).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(/^gatehouse: .+\nUsage: gatehouse <command>/);
    }
    expect(existsSync(join(dir, 'runtime.json'))).toBe(false);
    expect(existsSync(join(dir, 'gatehouse.lock'))).toBe(false);
  });

  it('says at start what it had to drop from a damaged options.json, and keeps the rest (tokens, settings)', async () => {
    const dir = await scope.dir();
    const made = await cliJson<{ record: { id: string } }>(dir, ['tokens', 'create', '--label', 'keep me']);
    await cliJson(dir, ['settings', 'set', 'rate_limit', '42']);
    const file = join(dir, 'options.json');
    const doc = JSON.parse(await readFile(file, 'utf8')) as { settings: Record<string, unknown> };
    doc.settings.cors = 'not a list';
    await writeFile(file, JSON.stringify(doc));
    const svc = await scope.serve(dir);
    expect(svc.info.warnings?.map((w) => w.code)).toEqual(['store_salvaged']);
    expect(svc.info.warnings?.[0]?.message).toMatch(/Dropped: settings\.cors\./);
    expect(svc.stderr()).toMatch(/had invalid parts/);
    const tokens = await cliJson<Array<{ id: string }>>(dir, ['tokens', 'list']);
    expect(tokens.map((t) => t.id)).toEqual([made.record.id]);
    expect((await cliJson<{ rate_limit: number }>(dir, ['settings', 'get'])).rate_limit).toBe(42);
  });
});
