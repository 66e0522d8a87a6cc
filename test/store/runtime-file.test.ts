import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { RuntimeInfo } from '../../main/contract/health.ts';
import {
  readRuntime,
  removeRuntime,
  runtimeFilePath,
  runtimeInfoOf,
  writeRuntime,
} from '../../main/store/runtime-file.ts';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gh-runtime-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const info = (pid: number): RuntimeInfo => ({
  pid,
  base_url: 'http://127.0.0.1:41234',
  mcp_url: 'http://127.0.0.1:41234/wp-json/gatehouse-mcp/v1/mcp',
  console_url: 'http://127.0.0.1:41234/console/',
  admin_url: 'http://127.0.0.1:41234/wp-json/gatehouse/v1/admin',
  version: '0.1.0',
  started: new Date().toISOString(),
});

async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '0']);
  await new Promise((r) => child.once('exit', r));
  return child.pid as number;
}

describe('runtime file', () => {
  it('writes runtime.json (0600, no temp left) and reads it back while the pid lives', async () => {
    const data = join(dir, 'data');
    const written = info(process.pid);
    await writeRuntime(data, written);
    expect(await readRuntime(data)).toEqual(written);
    expect(JSON.parse(await readFile(runtimeFilePath(data), 'utf8'))).toEqual(written);
    expect(await readdir(data)).toEqual(['runtime.json']);
    if (process.platform !== 'win32') expect((await stat(runtimeFilePath(data))).mode & 0o777).toBe(0o600);
  });

  it('reads as null when absent, not JSON, not a runtime record, or left by a dead process', async () => {
    expect(await readRuntime(dir)).toBeNull();
    await writeFile(runtimeFilePath(dir), '{"pid":');
    expect(await readRuntime(dir)).toBeNull();
    await writeFile(runtimeFilePath(dir), JSON.stringify({ pid: process.pid }));
    expect(await readRuntime(dir)).toBeNull();
    await writeRuntime(dir, info(await deadPid()));
    expect(await readRuntime(dir)).toBeNull();
  });

  it('refuses to write an invalid record', async () => {
    await expect(writeRuntime(dir, { ...info(process.pid), pid: 1.5 })).rejects.toMatchObject({
      code: 'invalid_value',
    });
    expect(await readdir(dir)).toEqual([]);
  });

  it('removes the file only while it still names the given pid', async () => {
    await writeRuntime(dir, info(process.pid));
    expect(await removeRuntime(dir, process.pid + 1)).toBe(false);
    expect(await readRuntime(dir)).not.toBeNull();
    expect(await removeRuntime(dir, process.pid)).toBe(true);
    expect(await readdir(dir)).toEqual([]);
    expect(await removeRuntime(dir, process.pid)).toBe(false);
  });
});

describe('runtimeInfoOf: the hand check every CLI command reads runtime.json with', () => {
  // The contract's schema is the reference: the check must take and drop exactly what it does.
  const same = (v: unknown) => {
    const z = RuntimeInfo.safeParse(v);
    expect(runtimeInfoOf(v)).toEqual(z.success ? z.data : null);
  };

  it('agrees with the RuntimeInfo schema on any JSON value and on near-misses of a valid file', () => {
    fc.assert(fc.property(fc.jsonValue({ maxDepth: 4 }), same), { numRuns: 500 });
    const field = fc.oneof(fc.string(), fc.integer(), fc.double(), fc.boolean(), fc.constant(null));
    fc.assert(
      fc.property(
        fc.record(
          {
            pid: fc.oneof(fc.integer(), fc.double(), fc.string(), fc.constant(2 ** 60)),
            base_url: field,
            mcp_url: field,
            console_url: fc.string(),
            admin_url: fc.string(),
            version: field,
            started: fc.string(),
            extra: field,
          },
          { requiredKeys: ['console_url', 'admin_url', 'started'] },
        ),
        same,
      ),
      { numRuns: 500 },
    );
    same({ ...info(123), extra: 'dropped' });
    same({ ...info(123), pid: 1.5 });
  });
});
