/**
 * Every shell command in README.md and docs/ (fenced ```sh blocks) is run by
 * this test or by CI (.ci/run). Each command is listed below with how it is
 * covered; a command in the docs that is not listed fails the test, so a new
 * one cannot slip in untried. The commands run here run as written, in a
 * throwaway HOME and data dir, with `gatehouse` and `gatehouse-bridge` on
 * PATH as an installed package puts them (small shims to this checkout's bins).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ensureBundle, ensureCliBundle } from '../bridge/helpers/bundle.ts';

vi.setConfig({ testTimeout: 120_000, hookTimeout: 120_000 });

// Terminal colour codes in vite's output.
// eslint-disable-next-line no-control-regex
const ANSI = /\x1b\[[0-9;]*m/g;
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const DOCS = [
  'README.md',
  'docs/bridge.md',
  'docs/console.md',
  'docs/conformance.md',
  'docs/decisions.md',
  'main/plugins/site/README.md',
];

/** The commands of every ```sh block, `\` continuations joined, comments dropped. */
function documentedCommands(): Array<{ file: string; command: string }> {
  const found: Array<{ file: string; command: string }> = [];
  for (const file of DOCS) {
    const text = readFileSync(join(ROOT, file), 'utf8');
    for (const block of text.matchAll(/```(?:sh|bash)\n([\s\S]*?)```/g)) {
      const joined = block[1]!.replace(/\\\n\s*/g, '');
      for (const raw of joined.split('\n')) {
        const command = raw.replace(/\s+#.*$/, '').trim();
        if (command && !command.startsWith('#')) found.push({ file, command });
      }
    }
  }
  return found;
}

const ciRun = readFileSync(join(ROOT, '.ci', 'run'), 'utf8');
const scripts = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> })
  .scripts;

type Coverage =
  { by: 'test' } | { by: 'ci'; proof: () => boolean } | { by: 'synopsis' } | { by: 'not-run'; why: string };

/** How each documented command is covered. `test`: run in this file (see `ran`). */
const COVERAGE: Record<string, Coverage> = {
  'bash scripts/setup.sh && npm run serve -- --enable': { by: 'test' },
  'bash scripts/setup.sh --test && dbus-run-session -- bash .ci/with-keyring.sh npm test': {
    by: 'ci',
    proof: () =>
      ciRun.includes('bash scripts/setup.sh --test') &&
      ciRun.includes('dbus-run-session -- bash .ci/with-keyring.sh npm test'),
  },
  'node bin/gatehouse.cjs settings set enabled true': { by: 'test' },
  'node bin/gatehouse.cjs tokens create --label "Claude Desktop" --keychain claude-desktop': { by: 'test' },
  'node bin/gatehouse-bridge.mjs config --client claude-desktop --token-keychain claude-desktop --write': {
    by: 'test',
  },
  'gatehouse settings set enabled true': { by: 'test' },
  'gatehouse tokens create --label "Claude Desktop" --keychain claude-desktop': { by: 'test' },
  'gatehouse-bridge config --client claude-desktop --token-keychain claude-desktop --write': { by: 'test' },
  'gatehouse-bridge config --client claude-desktop|cursor|vscode|claude-code|windsurf [--write] [--name NAME] [--config-file PATH] [bridge flags...]':
    { by: 'synopsis' },
  'node bin/gatehouse.cjs tokens create --label Inspector --keychain inspector': { by: 'test' },
  'node bin/gatehouse-bridge.mjs config --client cursor --token-keychain inspector --config-file "$HOME/gatehouse-inspector.json" --write':
    { by: 'test' },
  'npx mcp-inspector --cli --config "$HOME/gatehouse-inspector.json" --server gatehouse --method tools/list': {
    by: 'test',
  },
  'bash scripts/conformance.sh': { by: 'ci', proof: () => /bash scripts\/conformance\.sh/.test(ciRun) },
  'bash scripts/conformance-oauth-client.sh': {
    by: 'ci',
    proof: () => /bash scripts\/conformance-oauth-client\.sh/.test(ciRun),
  },
  'bash scripts/conformance.sh --keep-results out/': {
    by: 'ci',
    proof: () => /bash scripts\/conformance\.sh --keep-results /.test(ciRun),
  },
  'npm run build:renderer': {
    by: 'ci',
    proof: () =>
      scripts.build!.includes('npm run build:renderer') &&
      /npm run build/.test(readFileSync(join(ROOT, 'scripts', 'setup.sh'), 'utf8')),
  },
  'npx vite build --mode preload': {
    by: 'ci',
    proof: () =>
      scripts['build:preload'] === 'vite build --mode preload' && scripts.build!.includes('npm run build:preload'),
  },
  'GATEHOUSE_URL=http://127.0.0.1:7823 npx vite': { by: 'test' },
  'gatehouse upstreams add linear --url https://mcp.linear.app/mcp --oauth': {
    by: 'not-run',
    why: 'it signs in to a real SaaS server over the internet; test/bridge/remote.test.ts runs the same path against a real local remote MCP server',
  },
  'gatehouse-bridge config --client claude-desktop --remote https://mcp.linear.app/mcp --token-keychain claude-desktop --write':
    {
      by: 'not-run',
      why: 'the entry it writes is checked by test/bridge/config.test.ts (--remote entries) and started by test/bridge/remote.test.ts',
    },
  'npx electron-builder': {
    by: 'not-run',
    why: "packaging needs the Electron binary, which cannot be downloaded on these machines; test/app/builder-config.test.ts checks electron-builder.yml against electron-builder's own schema",
  },
  'node bin/gatehouse.cjs clients list': {
    by: 'not-run',
    why: "it reads the person's own HOME; test/clients/import.test.ts runs clients list on a throwaway HOME with every client's realistic files",
  },
  'node bin/gatehouse.cjs clients import cursor': {
    by: 'not-run',
    why: 'at a terminal it asks before anything runs; test/clients/import.test.ts runs the same import (--dry-run, then --yes) on a throwaway HOME and calls the imported tools through the gateway',
  },
  'node bin/gatehouse.cjs clients connect cursor': {
    by: 'not-run',
    why: "it edits the person's own client file; test/clients/connect.test.ts connects and restores Cursor's file on a throwaway HOME and drives the new entry with a real MCP client",
  },
  'node assets/generate-icons.mjs': { by: 'test' },
  'gatehouse cloud connect --url "$GATEWAY_URL"': { by: 'test' },
  'gatehouse cloud activate - < "$HOME/gatehouse-license.txt"': { by: 'test' },
  'gatehouse cloud status': { by: 'test' },
  'gatehouse cloud sync': { by: 'test' },
  'gatehouse cloud deactivate': { by: 'test' },
  'gatehouse cloud disconnect': { by: 'test' },
};

// ---- the commands run here ----

const RUN_HERE: string[] = [];
let home: string;
let dataDir: string;
let shims: string;
let serve: ChildProcess | null = null;
let serveOut = '';

function env(): NodeJS.ProcessEnv {
  const e: NodeJS.ProcessEnv = {
    ...process.env,
    HOME: home,
    GATEHOUSE_DATA_DIR: dataDir,
    PATH: `${shims}:${process.env.PATH ?? ''}`,
  };
  delete e.XDG_CONFIG_HOME;
  return e;
}

/** Runs one documented command as written (bash, from the checkout's folder). */
function sh(
  command: string,
  timeoutMs = 60_000,
  extraEnv: NodeJS.ProcessEnv = {},
): { code: number | null; out: string; err: string } {
  RUN_HERE.push(command);
  const r = spawnSync('bash', ['-c', command], {
    cwd: ROOT,
    env: { ...env(), ...extraEnv },
    encoding: 'utf8',
    timeout: timeoutMs,
  });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

/** Runs documented commands in order; each must succeed. */
function runAll(commands: string[]): void {
  for (const c of commands) {
    const r = sh(c);
    expect(r.code, `${c}\n${r.err}`).toBe(0);
  }
}

beforeAll(async () => {
  await ensureCliBundle();
  await ensureBundle();
  home = mkdtempSync(join(tmpdir(), 'gatehouse-docs-home-'));
  dataDir = join(home, 'data');
  shims = join(home, 'bin');
  mkdirSync(shims);
  // What an installed package's bin links do: run this checkout's bins.
  for (const [name, bin] of [
    ['gatehouse', 'gatehouse.cjs'],
    ['gatehouse-bridge', 'gatehouse-bridge.mjs'],
  ] as const) {
    writeFileSync(join(shims, name), `#!/bin/sh\nexec "${process.execPath}" "${join(ROOT, 'bin', bin)}" "$@"\n`);
    chmodSync(join(shims, name), 0o755);
  }
});

afterAll(async () => {
  if (serve && serve.exitCode === null) {
    const exited = new Promise((r) => serve!.once('exit', r));
    process.kill(-serve.pid!, 'SIGTERM'); // npm and the service under it
    await exited;
  }
  rmSync(home, { recursive: true, force: true });
});

describe('README quick start and "connect a client"', () => {
  it("npm run serve -- --enable starts the service (setup.sh is CI's first step)", async () => {
    const command = 'bash scripts/setup.sh && npm run serve -- --enable';
    RUN_HERE.push(command);
    // The setup half runs in .ci/run before the tests; the serve half runs here, on a free port
    // instead of 7823 (other test files run services at the same time).
    serve = spawn('npm', ['run', 'serve', '--', '--enable', '--port', '0'], {
      cwd: ROOT,
      env: env(),
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    serve.stdout!.on('data', (c: Buffer) => (serveOut += c.toString('utf8')));
    await expect.poll(() => serveOut, { timeout: 60_000 }).toContain('Stop with Ctrl+C.');
    expect(serveOut).toContain('gateway:       on');
  });

  const connectSteps = (gatehouse: string, bridge: string) => [
    `${gatehouse} settings set enabled true`,
    `${gatehouse} tokens create --label "Claude Desktop" --keychain claude-desktop`,
    `${bridge} config --client claude-desktop --token-keychain claude-desktop --write`,
  ];

  it.each([
    ['the checkout form', 'node bin/gatehouse.cjs', 'node bin/gatehouse-bridge.mjs'],
    [
      'the installed form (docs/bridge.md), with `gatehouse` and `gatehouse-bridge` on PATH',
      'gatehouse',
      'gatehouse-bridge',
    ],
  ])(
    '%s: settings, a token in the vault, and a client config that starts a working bridge',
    async (_form, gatehouse, bridge) => {
      runAll(connectSteps(gatehouse, bridge));
      // README: the documented token acts as the editor `agent` (least privilege), not as the administrator
      const listed = spawnSync('node', ['bin/gatehouse.cjs', 'tokens', 'list', '--json'], {
        cwd: ROOT,
        env: env(),
        encoding: 'utf8',
      });
      const made = (JSON.parse(listed.stdout) as Array<{ label: string; user_login?: string }>).filter(
        (t) => t.label === 'Claude Desktop',
      );
      expect(made.length).toBeGreaterThan(0);
      for (const t of made) expect(t.user_login).toBe('agent');
      await expectWorkingEntry(join(home, '.config', 'Claude', 'claude_desktop_config.json'));
    },
  );
});

/** Starts the entry exactly as the client would (no shell, the client's own environment) and lists tools. */
async function expectWorkingEntry(file: string): Promise<void> {
  const entry = (
    JSON.parse(readFileSync(file, 'utf8')) as { mcpServers: { gatehouse: { command: string; args: string[] } } }
  ).mcpServers.gatehouse;
  expect(entry.args).toEqual(expect.arrayContaining(['--data-dir', dataDir]));
  const clientEnv: Record<string, string> = { ...(process.env as Record<string, string>), HOME: home };
  delete clientEnv.GATEHOUSE_DATA_DIR;
  const client = new Client({ name: 'docs-test', version: '1' }, { capabilities: {} });
  await client.connect(
    new StdioClientTransport({ command: entry.command, args: entry.args, env: clientEnv, stderr: 'ignore' }),
  );
  try {
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('pages_list');
  } finally {
    await client.close();
  }
}

describe('README "Connect the app to a cloud gateway"', () => {
  it('connects the running service to the reference gateway, activates, syncs, deactivates and disconnects', async () => {
    // Its own process: sh() blocks this one while a command runs.
    const { startCloudChild } = await import('../cloud-client/helpers/cloud-child.ts');
    const cloudDir = mkdtempSync(join(tmpdir(), 'gatehouse-docs-cloud-'));
    const gw = await startCloudChild(cloudDir);
    try {
      const lic = await gw.op<{ license_key: string }>('licenses.create', { plan: 'pro' });
      writeFileSync(join(home, 'gatehouse-license.txt'), `${lic.license_key}\n`, { mode: 0o600 });
      const commands = documentedCommands()
        .filter((d) => d.file === 'README.md' && d.command.startsWith('gatehouse cloud '))
        .map((d) => d.command);
      expect(commands.length).toBeGreaterThanOrEqual(6);
      const outputs: string[] = [];
      for (const c of commands) {
        const r = sh(c, 60_000, { GATEWAY_URL: gw.url });
        expect(r.code, `${c}\n${r.err}`).toBe(0);
        outputs.push(r.out + r.err);
        if (c === 'gatehouse cloud status') expect(r.out).toMatch(/Connected to .* as site \S+/);
      }
      expect(outputs.join('')).not.toContain(lic.license_key);
    } finally {
      await gw.stop();
      rmSync(cloudDir, { recursive: true, force: true });
    }
  });
});

describe('docs/conformance.md: the Inspector example with the pinned Inspector 0.15', () => {
  it('lists the tools through the bridge', () => {
    runAll([
      'node bin/gatehouse.cjs tokens create --label Inspector --keychain inspector',
      'node bin/gatehouse-bridge.mjs config --client cursor --token-keychain inspector --config-file "$HOME/gatehouse-inspector.json" --write',
    ]);
    const r = sh(
      'npx mcp-inspector --cli --config "$HOME/gatehouse-inspector.json" --server gatehouse --method tools/list',
    );
    expect(r.code, r.err).toBe(0);
    expect((JSON.parse(r.out) as { tools: Array<{ name: string }> }).tools.map((t) => t.name)).toContain('pages_get');
  });
});

describe('docs/console.md', () => {
  it('the console dev server proxies the admin API of a running service', async () => {
    const command = 'GATEHOUSE_URL=http://127.0.0.1:7823 npx vite';
    RUN_HERE.push(command);
    const base = /base URL:\s+(\S+)/.exec(serveOut)![1]!;
    // As documented, with the running service's own URL instead of the default port.
    const vite = spawn('npx', ['vite', '--port', '0', '--strictPort', 'false'], {
      cwd: ROOT,
      env: { ...env(), GATEHOUSE_URL: base },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let out = '';
    vite.stdout!.on('data', (c: Buffer) => (out += c.toString('utf8')));
    try {
      const local = () => /Local:\s+(http:\/\/\S+)/.exec(out.replace(ANSI, ''))?.[1];
      await expect.poll(local, { timeout: 60_000 }).toBeTruthy();
      const url = local()!;
      const page = await fetch(url);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('<div id="root">');
      // the admin API through the dev server's proxy: the service answers (401 without a session)
      const admin = await fetch(new URL('/wp-json/gatehouse/v1/admin/health', url));
      expect(admin.status).toBe(401);
    } finally {
      process.kill(-vite.pid!, 'SIGTERM');
    }
  });

  // It supersamples every icon 4x4 on the CPU, each sample tested only against the shapes whose box it is in: ~2 s
  // alone (it was 14 s testing every layer), several times that on a busy two-core machine.
  it('node assets/generate-icons.mjs redraws the committed icons byte for byte', { timeout: 120_000 }, () => {
    const icons = ['icon-256.png', 'icon-1024.png', 'tray-on.png', 'tray-onTemplate@2x.png', 'tray-attention.png'].map(
      (f) => join(ROOT, 'assets', f),
    );
    const before = icons.map((f) => readFileSync(f));
    const r = sh('node assets/generate-icons.mjs', 100_000);
    expect(r.code, r.err).toBe(0);
    icons.forEach((f, i) => expect(readFileSync(f).equals(before[i]!), f).toBe(true));
  });
});

// Last, once the commands above have run.
describe('the commands in README.md and docs/', () => {
  it('are each run by this test or by CI (or are a synopsis, or say why they cannot run here)', () => {
    const unlisted = documentedCommands().filter(({ command }) => !(command in COVERAGE));
    expect(unlisted, 'add each new documented command to COVERAGE, and run it here or in .ci/run').toEqual([]);
    for (const [command, c] of Object.entries(COVERAGE)) {
      if (c.by === 'ci') expect(c.proof(), `${command} is run by CI`).toBe(true);
      if (c.by === 'test') expect(RUN_HERE, `${command} is run below`).toContain(command);
    }
    // every listed command is still in the docs (no stale entries)
    const documented = new Set(documentedCommands().map((d) => d.command));
    expect(Object.keys(COVERAGE).filter((c) => !documented.has(c))).toEqual([]);
  });
});
