import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { asDbFault, DatabaseUnavailable, isConnectionFault } from '../../../cloud/db/db-unavailable.ts';
import { openPostgres } from '../../../cloud/db/pg-db.ts';
import { CloudError } from '../../../cloud/errors.ts';

const withCode = (message: string, code: string) => Object.assign(new Error(message), { code });

describe('isConnectionFault', () => {
  it("knows the database being away: SQLSTATE 08xxx and 57P01-03, socket errors, the drivers' words", () => {
    for (const e of [
      withCode('terminating connection due to administrator command', '57P01'),
      withCode('the database system is starting up', '57P03'),
      withCode('connection failure', '08006'),
      withCode('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED'),
      new Error('Connection terminated unexpectedly'),
      new Error('Client has encountered a connection error and is not queryable'),
      new Error('timeout exceeded when trying to connect'),
      new Error('PGlite is closed'),
    ])
      expect(isConnectionFault(e), e.message).toBe(true);
  });
  it("leaves statement errors and the service's own refusals alone", () => {
    for (const e of [
      withCode('duplicate key value', '23505'),
      withCode('deadlock detected', '40P01'),
      new CloudError('quota_exceeded', 'Connection terminated unexpectedly (a message that happens to say so)'),
      new Error('a bug'),
    ]) {
      expect(isConnectionFault(e), e.message).toBe(false);
      expect(asDbFault(e)).toBe(e);
    }
  });
  it("classifies a server error by its SQLSTATE alone: its message may quote a value (a caller's text), and 08P01 is a bug of ours", () => {
    for (const e of [
      withCode('invalid input syntax for type integer: "Connection terminated unexpectedly"', '22P02'),
      withCode('value too long: "PGlite is closed"', '22001'),
      withCode('bind message supplies 3 parameters, but prepared statement "" requires 2', '08P01'),
    ])
      expect(isConnectionFault(e), e.message).toBe(false);
    expect(isConnectionFault(withCode('broken pipe', 'EPIPE'))).toBe(true);
  });
  it('as DatabaseUnavailable: 503 gateway_unavailable with Retry-After, the driver text kept for the log only', () => {
    const out = asDbFault(withCode('connect ECONNREFUSED 10.1.2.3:5432', 'ECONNREFUSED')) as DatabaseUnavailable;
    expect(out).toBeInstanceOf(DatabaseUnavailable);
    expect([out.code, out.status, out.retryAfter, out.details]).toEqual(['gateway_unavailable', 503, 5, {}]);
    expect(out.message).not.toContain('10.1.2.3');
    expect(out.reason).toContain('ECONNREFUSED');
  });
});

describe('a database that cannot be connected to', () => {
  // Judged by the attempt, not by a list of errno names: a stopped server on a Unix socket leaves no socket (ENOENT).
  const refusedBoth = async (url: string) => {
    const db = openPostgres(url);
    try {
      for (const attempt of [() => db.query('SELECT 1'), () => db.transaction((tx) => tx.query('SELECT 1'))]) {
        const e = await attempt().catch((x: unknown) => x);
        expect(e).toBeInstanceOf(DatabaseUnavailable);
        expect([(e as DatabaseUnavailable).status, (e as DatabaseUnavailable).retryAfter]).toEqual([503, 5]);
      }
      return (await db.query('SELECT 1').catch((x: DatabaseUnavailable) => x)) as DatabaseUnavailable;
    } finally {
      await db.close();
    }
  };

  it('is unavailable (503, Retry-After) on a Unix socket that is gone', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gh-pg-socket-'));
    try {
      const e = await refusedBoth(`postgresql://gatehouse@/gatehouse?host=${encodeURIComponent(dir)}`);
      expect(e.reason).toContain('ENOENT');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('is unavailable on a TCP port where nothing listens', async () => {
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    const port = (probe.address() as { port: number }).port;
    await new Promise((r) => probe.close(r));
    const e = await refusedBoth(`postgresql://gatehouse@127.0.0.1:${port}/gatehouse`);
    expect(e.reason).toContain('ECONNREFUSED');
  });
});
