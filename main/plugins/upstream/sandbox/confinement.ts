import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SandboxGrant, UpstreamConfinement } from '../../../contract/upstreams.ts';
import type { StoredTransport } from '../upstream-data.ts';
import { detectSandbox, type Detection } from './detect.ts';
import { runnerOf, suggestedGrants } from '../../../contract/sandbox-grants.ts';
import { openProxy, type NetProxy } from './net-proxy.ts';
import { refusalNote } from './refusals.ts';
import { BubblewrapSandbox, SeatbeltSandbox, type Sandbox } from './sandbox.ts';

type Stdio = Extract<StoredTransport, { kind: 'stdio' }>;

/** One start of a stdio server: what to spawn, and how to end its helpers (the proxy) with it. */
export interface StdioLaunch {
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd?: string;
  /** a note for the upstream's log when its stderr shows a refusal (a path it cannot see), else null */
  annotate(stderr: string): string | null;
  /** ends this start's helpers; called on every way the process ends */
  close(): Promise<void>;
}

export interface StdioLauncher {
  launch(command: string, args: readonly string[], env: Record<string, string>): Promise<StdioLaunch>;
}

export interface ConfinementDeps {
  dataDir: string;
  /** the person's HOME (tests: a temporary one) */
  home?: string;
  platform?: NodeJS.Platform;
  /** what this machine can do (tests: a machine that cannot confine); default: asked once (detect.ts) */
  detect?: () => Promise<Detection>;
  /** a line for the upstream's own log (its stderr ring): what the sandbox refused */
  note(id: string, line: string): void;
}

/** The grants a stored stdio upstream runs with: the stored ones, or (a record from before confinement) what its command line suggests. */
export const grantsOf = (t: Stdio): SandboxGrant[] => t.sandbox?.grants ?? suggestedGrants(t.command, t.args);

const LINUX_DEFAULT_PATH = '/usr/local/bin:/usr/bin:/bin';

/**
 * Confinement for the upstream manager: whether this machine can sandbox
 * (asked once), what each upstream runs with, in words for people, and a
 * launcher per upstream that starts it confined (or refuses to start it).
 */
export class Confinement {
  private detection: Detection | null = null;
  private asked: Promise<Sandbox | null> | null = null;
  private readonly platform: NodeJS.Platform;
  readonly home: string;

  constructor(private readonly deps: ConfinementDeps) {
    this.platform = deps.platform ?? process.platform;
    this.home = deps.home ?? homedir();
  }

  /** The machine is asked at the first need, not at construction: a CLI command that starts no upstream runs no `bwrap --version`. */
  private get sandbox(): Promise<Sandbox | null> {
    this.asked ??= (
      (this.deps.detect ? this.deps.detect() : detectSandbox(this.platform)) ?? Promise.resolve(null)
    ).then((r) => {
      this.detection = r;
      if (!r?.ok) return null;
      return r.backend === 'bubblewrap'
        ? new BubblewrapSandbox({ bwrap: r.bwrap, disableUserns: r.disableUserns })
        : new SeatbeltSandbox({ sandboxExec: r.sandboxExec });
    });
    return this.asked;
  }

  /** Resolves once the machine was asked (views before that say "checking"). */
  async ready(): Promise<void> {
    await this.sandbox;
  }

  /** `client`: one client's own process of a per-client upstream, whose HOME (and what it keeps there) is its own */
  privateHome(id: string, client?: string): string {
    return join(this.folderOf(id, client), 'home');
  }

  private folderOf(id: string, client?: string): string {
    return client ? join(this.deps.dataDir, 'sandbox', id, 'clients', client) : join(this.deps.dataDir, 'sandbox', id);
  }

  /** Removes an upstream's own folders (its HOME and what it kept there) with the upstream. */
  async forget(id: string): Promise<void> {
    await rm(join(this.deps.dataDir, 'sandbox', id), { recursive: true, force: true });
  }

  view(id: string, t: Stdio): UpstreamConfinement {
    const grants = grantsOf(t);
    const r = runnerOf(t.command, t.args);
    const base = {
      grants,
      runner: r ? { name: r.name, registry: r.registry } : null,
      private_home: this.privateHome(id),
      person_unconfined: !!t.sandbox?.unconfined,
    };
    if (t.sandbox?.unconfined)
      return {
        ...base,
        state: 'unconfined',
        backend: null,
        why: 'a person chose to run it without the sandbox (--unconfined): it has all of your rights, files and network',
        fix: `confine it: gatehouse upstreams grant ${id} [--allow-write DIR]... [--allow-net HOST]...`,
      };
    const d = this.detection;
    if (this.platform !== 'linux' && this.platform !== 'darwin')
      return {
        ...base,
        state: 'unconfined',
        backend: null,
        why: `Gatehouse has no OS sandbox for ${this.platform} yet: this server runs with all of your rights`,
        fix: 'run servers you do not trust on Linux (bubblewrap) or macOS (sandbox-exec), or in a container',
      };
    if (!d)
      return {
        ...base,
        state: 'confined',
        backend: null,
        why: 'checking whether this machine can confine it',
        fix: null,
      };
    if (!d.ok) return { ...base, state: 'unavailable', backend: d.backend, why: d.why, fix: d.fix };
    const net = grants.filter((g) => g.kind === 'net');
    if (d.backend === 'bubblewrap' && net.length && !d.socat)
      return {
        ...base,
        state: 'unavailable',
        backend: 'bubblewrap',
        why: 'its network grants need socat, which is not installed',
        fix: 'install socat (Debian/Ubuntu: sudo apt-get install socat), then: gatehouse upstreams test ID',
      };
    return {
      ...base,
      state: 'confined',
      backend: d.backend,
      why: `confined by ${d.backend === 'bubblewrap' ? `bubblewrap ${d.version}` : 'sandbox-exec'}: it sees only its runtime, its package, its own HOME and temp${grants.length ? ' and its grants' : '; no network'}`,
      fix: null,
    };
  }

  /** The launcher an upstream's connection starts through. */
  launcherFor(id: string, t: Stdio, client?: string): StdioLauncher {
    return {
      launch: async (command, args, env) => {
        const sandbox = await this.sandbox;
        const v = this.view(id, t);
        if (v.state === 'unconfined')
          return { command, args: [...args], env, annotate: () => null, close: async () => undefined };
        if (v.state === 'unavailable' || !sandbox)
          throw new Error(`the sandbox cannot start here: ${v.why}. ${v.fix ?? ''}`.trim());
        return this.confined(id, sandbox, command, args, env, grantsOf(t), client);
      },
    };
  }

  private async confined(
    id: string,
    sandbox: Sandbox,
    command: string,
    args: readonly string[],
    env: Record<string, string>,
    grants: SandboxGrant[],
    client?: string,
  ): Promise<StdioLaunch> {
    const privateHome = this.privateHome(id, client);
    const privateTmp = join(this.folderOf(id, client), 'tmp');
    await mkdir(privateHome, { recursive: true, mode: 0o700 });
    if (sandbox.backend === 'seatbelt') await mkdir(privateTmp, { recursive: true, mode: 0o700 });
    const net = grants.filter((g) => g.kind === 'net').map((g) => g.value);
    let proxy: NetProxy | null = null;
    let socketDir: string | null = null;
    const note = (target: string, why: string) =>
      this.deps.note(
        id,
        `gatehouse sandbox: refused a connection to ${target} (${why}); grant it with --allow-net ${target} (gatehouse upstreams grant ${id} ...)`,
      );
    try {
      if (net.length) {
        // A short private folder: a Unix socket path is limited to ~100 bytes, and nothing else may reach it (0700).
        socketDir = sandbox.proxyKind === 'unix' ? await mkdtemp(join(tmpdir(), 'gh-sbx-')) : null;
        proxy = await openProxy({
          listen: socketDir ? { path: join(socketDir, 'proxy.sock') } : { port: 0 },
          allow: net,
          onRefused: note,
        });
      }
      const fullEnv = { PATH: process.env.PATH ?? LINUX_DEFAULT_PATH, HOME: this.home, ...env };
      const prepared = await sandbox.prepare({
        command,
        args,
        env: fullEnv,
        grants,
        home: this.home,
        privateHome,
        privateTmp,
        dataDir: this.deps.dataDir,
        cwd: process.cwd(),
        proxy: proxy ? (socketDir ? { path: proxy.endpoint } : { port: proxy.port! }) : null,
      });
      const p = proxy;
      const dir = socketDir;
      let closed = false;
      return {
        command: prepared.command,
        args: prepared.args,
        env: prepared.env,
        cwd: prepared.cwd,
        annotate: (text) => refusalNote(text, prepared.visible),
        async close() {
          if (closed) return;
          closed = true;
          await p?.close().catch(() => undefined);
          if (dir) await rm(dir, { recursive: true, force: true });
        },
      };
    } catch (e) {
      await proxy?.close().catch(() => undefined);
      if (socketDir) await rm(socketDir, { recursive: true, force: true });
      throw e;
    }
  }
}
