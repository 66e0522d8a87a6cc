import { afterAll, describe, expect, it, vi } from 'vitest';
import { ADMIN_PREFIX, MCP_PATH, type RuntimeInfo } from '../../main/contract/health.ts';
import { httpDispatch } from '../../main/cli/admin-client.ts';
import { ADMIN_KEY_ACCOUNT } from '../../main/store/vault-account.ts';
import { openVault } from '../../main/store/vault.ts';
import { silentLogger } from '../../main/lib/logger.ts';
import { removeDir, spawnCli, startServe, tempDataDir, type Served } from '../cli/cli-harness.ts';
import { newJournal, prng, runLoad, type OpKind } from './crash-load.ts';
import { checkInvariants } from './crash-check.ts';

// Crash safety of staged writes against the real service as a child process:
// a bounded load of stages, confirms (admin API with the admin key, and the
// MCP tool in agent mode), discards and reads, SIGKILL at a random moment,
// restart on the same data dir, and the invariants of crash-check.ts after
// every restart. CRASH_SEED replays a run; CRASH_ROUNDS sets the rounds.

const ROUNDS = Number(process.env.CRASH_ROUNDS ?? 32);
const SEED = Number(process.env.CRASH_SEED ?? Math.floor(Math.random() * 2 ** 31));
// Short enough that writes from earlier rounds have expired by a later restart, long enough that a round's own
// confirms land before expiry on a loaded machine; tests only (see serve-command.ts).
const LIFETIME_MS = 6000;
// A round's writes are staged, confirmed and discarded within about this long of its first stage (measured:
// 150-900 ms); the kill lands at a random moment in it, after which the load only reads.
const KILL_WINDOW_MS = 800;
const ENV = { GATEHOUSE_TEST_STAGED_LIFETIME_MS: String(LIFETIME_MS) };

vi.setConfig({ testTimeout: 900_000, hookTimeout: 120_000 });

let dir: string | undefined;
let running: Served | null = null;
afterAll(async () => {
  await running?.stop('SIGKILL');
  await removeDir(dir);
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function adminFor(served: Served, key: string) {
  const base = served.info.base_url;
  const runtime: RuntimeInfo = {
    pid: served.info.pid,
    base_url: base,
    mcp_url: `${base}${MCP_PATH}`,
    console_url: `${base}/console/`,
    admin_url: `${base}${ADMIN_PREFIX}`,
    version: '',
    started: '',
  };
  return httpDispatch(runtime, key).dispatch;
}

describe('staged writes survive SIGKILL', () => {
  it(`${ROUNDS} rounds of load, kill and restart leave every acknowledged decision applied once and recorded`, async () => {
    dir = await tempDataDir();
    const rnd = prng(SEED);
    const journal = newJournal();
    const violations: string[] = [];
    const recovered = { completed: 0, pending_again: 0, expired: 0, interrupted: 0 };
    let earlyKills = 0;
    // Rounds whose kill cut off a call of each kind (a round can count for several), and rounds that cut off none.
    const killedDuring: Record<OpKind | 'nothing', number> = {
      stage: 0,
      confirm_admin: 0,
      confirm_mcp: 0,
      discard: 0,
      read: 0,
      nothing: 0,
    };
    let expiredProbes = 0;

    running = await startServe(dir, [], ENV);
    const vault = await openVault({ dataDir: dir, backend: 'file', log: silentLogger });
    const key = (await vault.get(ADMIN_KEY_ACCOUNT))!;
    expect(key).toBeTruthy();
    let admin = adminFor(running, key);
    // agent mode: the MCP confirm tool exists; no rate limit: the load is what this test is about
    const settings = await admin('settings.update', { approval_mode: 'agent', rate_limit: 0 });
    expect(settings.ok).toBe(true);
    const created = await admin('tokens.create', { label: 'crash load' });
    if (!created.ok) throw new Error(`tokens.create: ${created.message}`);
    const token = created.data.token;

    for (let round = 0; round < ROUNDS; round++) {
      // Load until a random moment, then SIGKILL: no flush, no clean stop.
      let stop = false;
      const served = running;
      const load = runLoad({ mcpUrl: served.info.mcp_url, token, admin }, journal, {
        round,
        seed: SEED,
        workers: 3,
        stageBudget: 8,
        stop: () => stop,
      });
      // The first stage comes once the fresh service has warmed up (connections, the first policy decision):
      // waiting for it rather than a fixed time spends the round where the writes are.
      await Promise.race([load.probe.firstStage, load.done, sleep(10_000)]);
      await sleep(rnd() * KILL_WINDOW_MS);
      served.child.kill('SIGKILL');
      const cut = [...load.probe.inFlight].filter(([, n]) => n > 0).map(([kind]) => kind);
      for (const kind of cut) killedDuring[kind]++;
      if (!cut.length) killedDuring.nothing++;
      stop = true;
      await served.stop('SIGKILL');
      await load.done;
      running = null;

      // Now and then, kill the next start too, while it opens the stores and recovers.
      if (round % 5 === 4) {
        const early = spawnCli(
          ['serve', '--port', '0', '--enable', '--json', '--data-dir', dir, '--vault', 'file'],
          ENV,
        );
        early.stdin.end();
        const exited = new Promise((r) => early.once('exit', r));
        await Promise.race([sleep(800 + rnd() * 3000), new Promise((r) => early.stdout.once('data', r)), exited]);
        early.kill('SIGKILL');
        await exited;
        earlyKills++;
      }

      running = await startServe(dir, [], ENV);
      admin = adminFor(running, key);
      for (const line of running.stderr().split('\n')) {
        const m = /recovered.*completed=(\d+).*pending_again=(\d+).*expired=(\d+).*interrupted=(\d+)/.exec(line);
        if (m) {
          recovered.completed += Number(m[1]);
          recovered.pending_again += Number(m[2]);
          recovered.expired += Number(m[3]);
          recovered.interrupted += Number(m[4]);
        }
      }
      const checked = await checkInvariants(dir, admin, journal, () => Date.now());
      expiredProbes += checked.expiredProbes;
      violations.push(...checked.violations.map((x) => `round ${round}: ${x}`));
    }

    const summary = {
      seed: SEED,
      rounds: ROUNDS,
      operations: journal.ops,
      staged: journal.staged.size,
      acknowledged_confirms: journal.confirmed.size,
      acknowledged_discards: journal.discarded.size,
      cut_off_by_a_kill: journal.unknown,
      rounds_killed_during: killedDuring,
      kills_during_start: earlyKills,
      expired_confirm_probes: expiredProbes,
      recovered,
      violations: violations.length,
    };
    console.log(`crash test: ${JSON.stringify(summary)}`);
    if (violations.length) console.log(violations.slice(0, 50).join('\n'));
    expect(violations).toEqual([]);
    // The load did what it is for: confirms acknowledged both ways, and some writes were caught mid-flight.
    expect([...journal.confirmed.values()]).toEqual(expect.arrayContaining(['admin', 'mcp']));
    expect(journal.staged.size).toBeGreaterThan(ROUNDS);
  });
});
