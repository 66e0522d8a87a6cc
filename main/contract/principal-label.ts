import type { Principal } from './principal.ts';

// Without the principal schemas: the CLI prints staged writes and audit entries with it, and a command sent to a
// running service loads no schema (main/cli/admin-client.ts).

/** One short line for people: the console's history, the CLI, the audit's `client` column. */
export function principalLabel(p: Principal | null | undefined): string {
  if (!p) return '-';
  switch (p.kind) {
    case 'person':
      return p.session ? `${p.surface} (${p.session})` : p.via === 'data_dir' ? `${p.surface} (offline)` : p.surface;
    case 'token':
      return `${p.login ?? p.user_id} via token ${p.token_preview ?? p.token_id}${p.surface === 'rest' ? ' (REST)' : ''}`;
    case 'service':
      return `service: ${p.job}`;
    case 'legacy':
      return p.label;
  }
}
