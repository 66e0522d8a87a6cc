import { describe, expect, it } from 'vitest';
import { FakeApi, makeAudit, makeHealth } from './fake-api.ts';

// The screens' tests run on FakeApi; it is held to the contract's schemas so it cannot drift from the service.
describe('FakeApi against the contract', () => {
  it('answers every screen action in the shape the contract gives', async () => {
    const fake = new FakeApi({ audit: Array.from({ length: 3 }, (_, i) => makeAudit(i)) });
    for (const action of [
      'health.get',
      'settings.get',
      'tokens.list',
      'users.list',
      'staged.list',
      'audit.query',
      'stats.get',
      'tools.list',
      'plugins.list',
      'cloud.status',
    ] as const) {
      expect((await fake.api[action]({} as never)).ok, action).toBe(true);
    }
  });

  it('refuses to answer with what the service could not send, or to take what it would refuse', async () => {
    const drifted = new FakeApi({ health: { ...makeHealth(), data_dir: 7 as unknown as string } });
    await expect(drifted.api['health.get']({})).rejects.toThrow(
      /the fake answered health.get with what the contract refuses/,
    );
    await expect(new FakeApi().api['audit.query']({ cursor: 5 } as never)).rejects.toThrow(
      /the console sent audit.query an input the contract refuses/,
    );
  });
});
