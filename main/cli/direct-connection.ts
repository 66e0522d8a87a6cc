import type { VaultChoice } from '../store/vault.ts';
import type { Logger } from '../lib/logger.ts';
import { GatehouseError } from '../core/errors.ts';
import type { Connection } from './connect.ts';

/** The CLI on the files, as the data dir's owner, when no service runs: the whole core, opened in this process. */
export async function direct(dataDir: string, vaultChoice: VaultChoice, log: Logger): Promise<Connection> {
  // A command parses each document once: zod's compiled parsers (a new Function per object schema, at its first
  // parse) cost more than they save here, some 15 ms of a command. Set before the core builds its schemas (they
  // are built at first use, main/contract/lazy-schema.ts); the service keeps them.
  (await import('zod')).z.config({ jitless: true });
  // Loaded only here: with a service running, the CLI never pays for the whole gateway.
  const [{ openLocalCore }, { dispatchAs }, { PRINCIPALS }] = await Promise.all([
    import('../local-core.ts'),
    import('../core/admin/invoke.ts'),
    import('../contract/principal.ts'),
  ]);
  const gw = await openLocalCore({ dataDir, vault: vaultChoice, log, owner: 'cli', warnFileVault: false });
  const dispatch = dispatchAs(gw.invoke, PRINCIPALS.cliDirect);
  return {
    mode: 'direct',
    dispatch,
    send: dispatch,
    async exportAudit(input, out) {
      const r = await gw.invoke('audit.export', input, PRINCIPALS.cliDirect);
      if (!r.ok) throw new GatehouseError(r.code, r.message, r.details ?? {});
      await r.data.write(out);
    },
    close: () => gw.close(),
  };
}
