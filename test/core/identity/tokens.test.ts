import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { JsonFileStore } from '../../../main/store/json-file-store.ts';
import { OptionsData, emptyOptions } from '../../../main/core/ports/options-data.ts';
import { Tokens, hashToken, LAST_USED_THROTTLE_MS } from '../../../main/core/identity/tokens.ts';
import { Users } from '../../../main/core/identity/users.ts';
import { TOKEN_PATTERN } from '../../../main/contract/tokens.ts';
import { silentLogger } from '../../../main/lib/logger.ts';

let dir: string;
let store: JsonFileStore<OptionsData>;
let now = Date.parse('2026-11-22T10:00:00Z');
const clock = { now: () => now };

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gatehouse-tokens-'));
  store = await JsonFileStore.open({
    file: join(dir, 'options.json'),
    schema: OptionsData,
    defaults: emptyOptions,
    log: silentLogger,
  });
});
afterEach(async () => rm(dir, { recursive: true, force: true }));

describe('tokens', () => {
  it('creates gth_ + 43 base64url characters, stores only the sha256 and a preview', async () => {
    const admin = await new Users(store, clock).ensureAdmin();
    const tokens = new Tokens(store, clock);
    const { token, record } = await tokens.create('Claude', admin);
    expect(token).toMatch(TOKEN_PATTERN);
    const stored = store.read().tokens[0]!;
    expect(stored.hash).toBe(hashToken(token));
    expect(stored.preview).toBe(`gth_…${token.slice(-4)}`);
    expect(JSON.stringify(store.read())).not.toContain(token);
    expect(record).not.toHaveProperty('hash');
  });

  it('verifies the right token only, and not after revoke', async () => {
    const admin = await new Users(store, clock).ensureAdmin();
    const tokens = new Tokens(store, clock);
    const a = await tokens.create('a', admin);
    const b = await tokens.create('b', admin);
    expect(tokens.verify(a.token)?.record.id).toBe(a.record.id);
    expect(tokens.verify(b.token)?.record.id).toBe(b.record.id);
    expect(tokens.verify(a.token.slice(0, -1) + (a.token.endsWith('A') ? 'B' : 'A'))).toBeNull();
    expect(tokens.verify('gth_short')).toBeNull();
    await tokens.revoke(a.record.id);
    expect(tokens.verify(a.token)).toBeNull();
    expect(tokens.verify(b.token)).not.toBeNull();
    await expect(tokens.revoke(a.record.id)).rejects.toMatchObject({ code: 'not_found' });
  });

  it('writes last_used at most once a minute', async () => {
    const admin = await new Users(store, clock).ensureAdmin();
    const tokens = new Tokens(store, clock);
    const { token } = await tokens.create('t', admin);
    let writes = 0;
    const update = store.update.bind(store);
    store.update = ((fn: never) => (writes++, update(fn))) as typeof store.update;
    for (let i = 0; i < 50; i++) tokens.touch(tokens.verify(token)!.record);
    await store.flush();
    expect(writes).toBe(1);
    expect(store.read().tokens[0]!.last_used).toBe(new Date(now).toISOString());
    now += LAST_USED_THROTTLE_MS - 1;
    tokens.touch(tokens.verify(token)!.record);
    expect(writes).toBe(1);
    now += 1;
    tokens.touch(tokens.verify(token)!.record);
    await store.flush();
    expect(writes).toBe(2);
  });

  it('refuses an empty label', async () => {
    const admin = await new Users(store, clock).ensureAdmin();
    await expect(new Tokens(store, clock).create('   ', admin)).rejects.toMatchObject({ code: 'invalid_value' });
  });
});

describe('users', () => {
  it('creates one admin on first run and keeps the last administrator', async () => {
    const users = new Users(store, clock);
    const a = await users.ensureAdmin();
    expect((await users.ensureAdmin()).id).toBe(a.id);
    expect(a.login).toBe('admin');
    await expect(users.setRole('admin', 'editor')).rejects.toMatchObject({ code: 'conflict' });
    await users.add('eve', 'editor');
    await expect(users.add('eve', 'author')).rejects.toMatchObject({ code: 'conflict' });
    await expect(users.add('Bad Login', 'author')).rejects.toMatchObject({ code: 'invalid_value' });
    await users.setRole('eve', 'administrator');
    expect((await users.setRole('admin', 'editor')).role).toBe('editor');
  });
});
