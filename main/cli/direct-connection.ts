import type { VaultChoice } from '../store/vault.ts';
import type { Logger } from '../lib/logger.ts';
import { GatehouseError } from '../core/errors.ts';
import type { Connection } from './connect.ts';

/** The CLI on the files, as the data dir's owner, when no service runs: the whole core, opened in this process. */
export async function direct(dataDir: string, vaultChoice: VaultChoice, log: Logger): Promise<Connection> {
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
