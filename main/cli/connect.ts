import { readRuntime } from '../store/runtime-file.ts';
import { openVault, type VaultChoice } from '../store/vault.ts';
import { ADMIN_KEY_ACCOUNT } from '../rest/admin-auth.ts';
import type { ApiDispatch } from '../contract/api.ts';
import type { AuditQuery } from '../contract/audit.ts';
import type { Logger } from '../core/ports.ts';
import { GatehouseError } from '../core/errors.ts';
import { openGateway } from '../gateway.ts';
import { httpDispatch } from './admin-client.ts';

export interface Connection {
  mode: 'service' | 'direct';
  dispatch: ApiDispatch;
  exportAudit(q: Omit<AuditQuery, 'limit' | 'cursor'>, format: 'csv' | 'jsonl', out: NodeJS.WritableStream): Promise<void>;
  loginLink(): Promise<string>;
  close(): Promise<void>;
}

/**
 * Only one process writes the store: with a service running the CLI goes
 * through its admin API (authenticated with the admin key from the vault);
 * otherwise it takes the data dir lock and works on the files itself.
 */
export async function connect(dataDir: string, vaultChoice: VaultChoice, log: Logger): Promise<Connection> {
  const runtime = await readRuntime(dataDir);
  if (runtime) {
    const vault = await openVault({ dataDir, backend: vaultChoice, log });
    const key = await vault.get(ADMIN_KEY_ACCOUNT);
    if (!key) throw new GatehouseError('unauthorized', `a service runs (pid ${runtime.pid}) but its admin key is not in the ${vault.label} vault of this user; run the CLI as the same OS user`);
    const d = httpDispatch(runtime, key);
    return {
      mode: 'service',
      dispatch: d,
      async exportAudit(q, format, out) {
        const params = new URLSearchParams({ format });
        for (const [k, v] of Object.entries(q)) if (v !== undefined) params.set(k, String(v));
        const res = await d.raw('GET', `audit/export?${params}`);
        if (!res.ok || !res.body) throw new GatehouseError('service_unavailable', `audit export failed with HTTP ${res.status}`);
        for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) out.write(chunk);
      },
      async loginLink() {
        const res = await d.raw('POST', 'login-link');
        const body = (await res.json()) as { ok: boolean; data?: { url: string }; message?: string };
        if (!body.ok || !body.data) throw new GatehouseError('service_unavailable', body.message ?? 'could not get a login link');
        return body.data.url;
      },
      close: async () => undefined,
    };
  }
  const gw = await openGateway({ dataDir, vault: vaultChoice, log, owner: 'cli' });
  gw.setActor('cli');
  return {
    mode: 'direct',
    dispatch: gw.dispatch,
    exportAudit: async (q, format, out) => void (await gw.audit.export(q, format, out)),
    loginLink: async () => {
      throw new GatehouseError('service_unavailable', 'no service is running: start one with `gatehouse serve`; it prints a login link');
    },
    close: () => gw.close(),
  };
}
