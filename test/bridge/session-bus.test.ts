import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientEntry } from '../../main/contract/client-config.ts';
import { silentLogger } from '../../main/lib/logger.ts';
import { busAddress, findSessionBus, type BusProbe } from '../../main/lib/session-bus.ts';
import { openVault } from '../../main/store/vault.ts';
import { clientTokenAccount } from '../../main/store/vault-account.ts';
import { startTestService } from '../helpers/service.ts';
import { BIN, ensureBundle } from './helpers/bundle.ts';

/**
 * A client that starts the bridge with a stripped environment (the Python
 * SDK keeps only HOME, LOGNAME, PATH, SHELL, TERM, USER) drops
 * DBUS_SESSION_BUS_ADDRESS: the bridge finds the user's session bus at its
 * standard place before it opens the keychain (main/lib/session-bus.ts).
 */

const probe = (over: Partial<BusProbe> & { sockets?: Record<string, number> }): BusProbe => ({
  uid: 1000,
  platform: 'linux',
  stat: (path) => {
    const owner = over.sockets?.[path];
    return owner === undefined ? null : { isSocket: () => owner >= 0, uid: Math.abs(owner) };
  },
  ...over,
});

describe('finding the session bus', () => {
  it('takes $XDG_RUNTIME_DIR/bus, else /run/user/<uid>/bus, only as a socket this user owns', () => {
    expect(findSessionBus({ GATEHOUSE_RUN_USER_DIR: '/r' }, probe({ sockets: { '/r/1000/bus': 1000 } }))).toBe(
      'unix:path=/r/1000/bus',
    );
    const both = { '/xdg/bus': 1000, '/run/user/1000/bus': 1000 };
    expect(findSessionBus({ XDG_RUNTIME_DIR: '/xdg' }, probe({ sockets: both }))).toBe('unix:path=/xdg/bus');
    expect(findSessionBus({}, probe({ sockets: both }))).toBe('unix:path=/run/user/1000/bus');
    // XDG_RUNTIME_DIR names a folder without a bus: the standard one.
    expect(findSessionBus({ XDG_RUNTIME_DIR: '/elsewhere' }, probe({ sockets: both }))).toBe(
      'unix:path=/run/user/1000/bus',
    );
    // Another user's socket, a plain file (or a link: lstat is never a socket then), a relative folder: nothing.
    expect(findSessionBus({ XDG_RUNTIME_DIR: '/xdg' }, probe({ sockets: { '/xdg/bus': 1001 } }))).toBeNull();
    expect(findSessionBus({}, probe({ sockets: { '/run/user/1000/bus': -1000 } }))).toBeNull();
    expect(findSessionBus({ XDG_RUNTIME_DIR: 'xdg' }, probe({ sockets: { 'xdg/bus': 1000 } }))).toBeNull();
  });

  it('never replaces a bus the environment names, and guesses nothing on macOS or Windows', () => {
    const sockets = { '/run/user/1000/bus': 1000 };
    expect(findSessionBus({ DBUS_SESSION_BUS_ADDRESS: 'unix:path=/x' }, probe({ sockets }))).toBeNull();
    expect(findSessionBus({}, probe({ sockets, platform: 'darwin' }))).toBeNull();
    expect(findSessionBus({}, probe({ sockets, platform: 'win32' }))).toBeNull();
  });

  it('escapes the path as a D-Bus address', () => {
    expect(busAddress('/run/user/1000/bus')).toBe('unix:path=/run/user/1000/bus');
    expect(busAddress('/tmp/a b,c=d;é/bus')).toBe('unix:path=/tmp/a%20b%2cc%3dd%3b%c3%a9/bus');
  });
});

async function keychainReachable(): Promise<boolean> {
  const dir = await mkdtemp(join(tmpdir(), 'gh-bus-probe-'));
  try {
    await openVault({ dataDir: dir, backend: 'keychain', log: silentLogger });
    return true;
  } catch {
    return false;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
const hasKeychain = !!process.env.DBUS_SESSION_BUS_ADDRESS && (await keychainReachable());

/** The session bus's own socket, from the address dbus-run-session gave (a path or an abstract name). */
function busTarget(address: string): string {
  const unix = address.split(';').find((a) => a.startsWith('unix:'))!;
  const params = new Map(
    unix
      .slice(5)
      .split(',')
      .map((kv) => kv.split('=') as [string, string]),
  );
  const decode = (v: string) => decodeURIComponent(v);
  if (params.has('path')) return decode(params.get('path')!);
  if (params.has('abstract')) return `\0${decode(params.get('abstract')!)}`;
  throw new Error(`no unix path in ${address}`);
}

describe.skipIf(!hasKeychain)('the bridge started with a stripped environment, token in the keychain', () => {
  let svc: Awaited<ReturnType<typeof startTestService>>;
  let runUser: string;
  let runtimeDir: string;
  let bus: Server;
  const sockets = new Set<Socket>();
  const account = `bus-test-${randomUUID()}`;

  beforeAll(async () => {
    await ensureBundle();
    svc = await startTestService({ vault: 'keychain' });
    await svc.createToken({ label: 'bus test', keychain_account: account });
    // Where /run/user would be (GATEHOUSE_RUN_USER_DIR), with the session bus at <uid>/bus: a socket of this user,
    // relaying to the bus this test runs on (dbus-run-session's), as systemd's /run/user/<uid>/bus would be.
    runUser = await mkdtemp(join(tmpdir(), 'gh-run-user-'));
    runtimeDir = join(runUser, String(process.getuid!()));
    await mkdir(runtimeDir, { mode: 0o700 });
    const target = busTarget(process.env.DBUS_SESSION_BUS_ADDRESS!);
    bus = createServer((inbound) => {
      const outbound = connect(target);
      for (const s of [inbound, outbound]) {
        sockets.add(s);
        s.on('error', () => undefined).on('close', () => sockets.delete(s));
      }
      inbound.pipe(outbound).pipe(inbound);
    });
    await new Promise<void>((r) => bus.listen(join(runtimeDir, 'bus'), r));
  }, 60_000);
  afterAll(async () => {
    for (const s of sockets) s.destroy();
    await new Promise((r) => bus?.close(r));
    await svc?.core.vault.delete(clientTokenAccount(account)).catch(() => undefined);
    await svc?.cleanup();
    await rm(runUser, { recursive: true, force: true });
  });

  /** The bridge as the Python SDK starts it: only its default variables (and the runtime folder, as a client keeping it would). */
  const start = async (extra: Record<string, string>) => {
    const { entry } = clientEntry(
      'cursor',
      { command: process.execPath, args: [BIN], platform: process.platform },
      { kind: 'none' },
      ['--data-dir', svc.dataDir, '--token-keychain', account, '--vault', 'keychain', '--log-level', 'debug'],
    );
    const env: Record<string, string> = {};
    for (const k of ['HOME', 'LOGNAME', 'PATH', 'SHELL', 'TERM', 'USER']) if (process.env[k]) env[k] = process.env[k]!;
    const transport = new StdioClientTransport({
      command: entry.command as string,
      args: entry.args as string[],
      env: { ...env, ...extra },
      stderr: 'pipe',
    });
    let stderr = '';
    (transport.stderr as Readable).on('data', (d: Buffer) => (stderr += d.toString()));
    const client = new Client({ name: 'python-like', version: '1.0.0' }, { capabilities: {} });
    const connected = await client.connect(transport).then(
      () => true,
      () => false,
    );
    return { client, connected, stderr: () => stderr };
  };

  it('finds the session bus at /run/user/<uid>/bus and reads the token from the keychain', async () => {
    // Neither DBUS_SESSION_BUS_ADDRESS nor XDG_RUNTIME_DIR: what the Python SDK's stdio client passes on.
    const b = await start({ GATEHOUSE_RUN_USER_DIR: runUser });
    try {
      expect(b.connected, b.stderr()).toBe(true);
      const tools = await b.client.listTools();
      expect(tools.tools.map((t) => t.name)).toContain('pages_list');
      expect(b.stderr()).toContain('session bus');
      expect(b.stderr()).toContain(`unix:path=${join(runtimeDir, 'bus')}`);
    } finally {
      await b.client.close();
    }
  }, 30_000);

  it('a client that keeps XDG_RUNTIME_DIR: the bus in it', async () => {
    const b = await start({ XDG_RUNTIME_DIR: runtimeDir });
    try {
      expect(b.connected, b.stderr()).toBe(true);
      expect((await b.client.listTools()).tools.map((t) => t.name)).toContain('pages_list');
    } finally {
      await b.client.close();
    }
  }, 30_000);

  it('a file where the socket should be is not taken: the keychain stays out of reach and the bridge says so', async () => {
    const fake = await mkdtemp(join(tmpdir(), 'gh-xdg-fake-'));
    try {
      await mkdir(join(fake, String(process.getuid!())));
      await writeFile(join(fake, String(process.getuid!()), 'bus'), 'not a socket');
      const b = await start({ GATEHOUSE_RUN_USER_DIR: fake });
      expect(b.connected).toBe(false);
      expect(b.stderr()).toContain(`--token-keychain ${account}:`);
      expect(b.stderr()).not.toContain('session bus');
      await b.client.close().catch(() => undefined);
    } finally {
      await rm(fake, { recursive: true, force: true });
    }
  }, 30_000);
});
