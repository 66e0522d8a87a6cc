// @vitest-environment jsdom
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cleanup, screen, within } from '@testing-library/react';
import { userEvent } from '@testing-library/user-event';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openLocalCore } from '../../main/local-core.ts';
import { Cloud } from '../../renderer/screens/cloud/cloud.tsx';
import { Usage } from '../../renderer/screens/usage/usage.tsx';
import { coreApi } from './core-api.ts';
import { renderWith } from './render.tsx';

// The Cloud screen on the real local core and its real cloud client (no gateway behind it):
// what the screen shows is what the service answers. The connected flow is in test/e2e/cloud.e2e.test.ts.

let dir: string;
let core: Awaited<ReturnType<typeof openLocalCore>>;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gh-cloud-core-'));
  core = await openLocalCore({
    dataDir: dir,
    vault: 'file',
    owner: 'cli',
    cloud: { timeouts: { connectMs: 1000, interactiveMs: 2000, backgroundMs: 2000 }, sleep: async () => {} },
  });
});
afterEach(async () => {
  cleanup();
  await core.close();
  await rm(dir, { recursive: true, force: true });
});

/** A port on 127.0.0.1 that nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

describe('Cloud screen on the real core', () => {
  it('unconnected: the connect form; a gateway that cannot be reached is said in words with its code, and nothing is connected', async () => {
    const api = coreApi(core as never);
    renderWith({ api }, <Cloud />);
    await userEvent.type(await screen.findByLabelText('Gateway address'), `http://127.0.0.1:${await closedPort()}`);
    await userEvent.click(screen.getByRole('button', { name: 'Connect' }));
    const alert = await screen.findByRole('alert', {}, { timeout: 15_000 });
    expect(alert.textContent).toMatch(
      /^Could not connect\. The cloud gateway could not be reached.* \(code gateway_unavailable/,
    );
    expect(screen.getByRole('form', { name: 'Connect to a cloud gateway' })).toBeTruthy();
    expect(core.cloud.status().connected).toBe(false);
    // the attempt is on record (the next test relies on that to show "no request")
    expect(core.cloud.status().last_errors.map((e) => e.code)).toContain('gateway_unavailable');
  }, 20_000);

  it('a gateway address that is neither https nor this machine is refused before any request', async () => {
    renderWith({ api: coreApi(core as never) }, <Cloud />);
    await userEvent.type(await screen.findByLabelText('Gateway address'), 'http://gateway.example.com');
    await userEvent.click(screen.getByRole('button', { name: 'Connect' }));
    const alert = await screen.findByRole('alert');
    expect(alert.textContent).toMatch(/\(code invalid_value/);
    expect(core.cloud.status().last_errors).toEqual([]);
  });

  it('the Usage screen says not connected from the real cloud.usage', async () => {
    renderWith({ api: coreApi(core as never) }, <Usage />);
    const quota = await screen.findByRole('region', { name: 'Cloud quotas' });
    expect(await within(quota).findByText(/^Not connected\./)).toBeTruthy();
  });
});
