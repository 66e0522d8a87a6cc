import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { HealthReport } from '../../main/contract/health.ts';
import type { PolicyView } from '../../main/contract/policy.ts';
import { silentLogger } from '../../main/lib/logger.ts';
import { startService, type RunningService } from '../../main/service.ts';

/**
 * A stored policy that cannot be used (edited by hand into something Cedar refuses) refuses every call,
 * which is right, and says so: in the health report (the Overview, the tray, `gatehouse status`) and in
 * the console's Policy screen, once the service is ready (the check loads the engine after ready).
 */
let dir: string;
let svc: RunningService | null = null;
afterAll(async () => {
  await svc?.stop();
  await rm(dir, { recursive: true, force: true });
});

const start = () => startService({ dataDir: dir, port: 0, vault: 'file', enable: true, log: silentLogger });
async function ok<T>(s: RunningService, action: string, input: unknown = {}): Promise<T> {
  const r = await s.dispatch(action as never, input as never);
  if (!r.ok) throw new Error(`${action}: ${r.message}`);
  return r.data as T;
}

/** The health report once the background check has had its say (the next health event, if it was not there yet). */
async function healthWith(s: RunningService, code: string): Promise<HealthReport> {
  for (;;) {
    const changed = new Promise<void>((r) => {
      const off = s.events.subscribe((e) => e.type === 'health' && (off(), r()));
    });
    const h = await ok<HealthReport>(s, 'health.get');
    if (h.warnings.some((w) => w.code === code)) return h;
    await changed;
  }
}

describe('a stored policy that cannot be used', () => {
  it('is named in the health report and on the Policy screen, and goes once a valid one is set', async () => {
    dir = await mkdtemp(join(tmpdir(), 'gh-broken-policy-'));
    svc = await start();
    const shown = await ok<PolicyView>(svc, 'policy.get');
    expect(shown.problem).toBeNull();
    await ok(svc, 'policy.set', { text: shown.text });
    await svc.stop();
    // a hand edit the validator refuses
    const file = join(dir, 'options.json');
    const doc = JSON.parse(await readFile(file, 'utf8')) as { policy: { text: string } };
    doc.policy.text = 'permit (principal, action, resource) when { resource.colour == "red" };';
    await writeFile(file, JSON.stringify(doc));

    svc = await start();
    const health = await healthWith(svc, 'policy_unavailable');
    const warning = health.warnings.find((w) => w.code === 'policy_unavailable')!;
    expect(warning.message).toMatch(/^The stored policy cannot be used \(.*colour.*\): every tool call is refused/);
    expect(warning.message).toContain('gatehouse policy set FILE');
    const view = await ok<PolicyView>(svc, 'policy.get');
    expect(view.problem).toMatch(/^this policy cannot be used \(.*colour.*\): every tool call is refused/);

    await ok(svc, 'policy.set', { text: shown.text });
    const after = await ok<HealthReport>(svc, 'health.get');
    expect(after.warnings.map((w) => w.code)).not.toContain('policy_unavailable');
    expect((await ok<PolicyView>(svc, 'policy.get')).problem).toBeNull();
  }, 60_000);
});
