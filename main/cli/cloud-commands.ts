import type { CloudStatusView } from '../contract/cloud-actions.ts';
import { out, parse, withConnection } from './args.ts';
import { safe, unwrap, UsageError } from './output.ts';
import { readSecretFromStdin } from './stdin-secret.ts';

/** The license in words: no license (never activated, or deactivated) is the free plan, not "invalid". */
function licenseLine(s: CloudStatusView): string {
  const c = s.certificate;
  if (s.license_state === 'deactivated')
    return 'License: deactivated: the free plan applies (gatehouse cloud activate LICENSE_KEY to use one again)';
  if (s.license_state === 'none' || !c)
    return 'License: none activated: the free plan applies (gatehouse cloud activate LICENSE_KEY)';
  return safe`License: ${c.license.status}, plan ${c.license.plan ?? '-'}, key ${c.license.key_preview ?? '-'}; certificate until ${c.grants_until} (${c.reason})`;
}

function statusText(s: CloudStatusView): string {
  const p = s.previous_site;
  const history = p
    ? [
        safe`Before: site ${p.site_id ?? '-'} on ${p.gateway_url}, disconnected ${p.disconnected_at}; ${p.delivered} usage event(s) delivered, ${p.rejected} refused, ${p.abandoned} written off.`,
      ]
    : [];
  if (!s.connected)
    return [
      'Not connected to a cloud gateway: the local free plan applies.',
      'Connect with: gatehouse cloud connect --url GATEWAY_URL',
      ...history,
    ]
      .concat(s.warnings.map((w) => safe`! ${w.message}`))
      .join('\n');
  return [
    safe`Connected to ${s.gateway_url} (${s.environment}) as site ${s.site_id}`,
    safe`Pinned key: ${s.pinned_key?.kid ?? '-'} ${s.pinned_key?.fingerprint ?? ''}`,
    licenseLine(s),
    safe`Products: ${Object.entries(s.products)
      .map(([p, v]) => `${p}=${v}`)
      .join(' ')}`,
    safe`Last sync: ${s.last_sync ?? 'never'}; outbox: ${s.outbox.depth} waiting, ${s.outbox.delivered} delivered`,
    ...s.last_errors
      .slice(0, 3)
      .map((e) => safe`Last error: ${e.operation} ${e.code}: ${e.message} (request ${e.request_id})`),
    ...s.warnings.map((w) => safe`! ${w.message}`),
    ...s.quota_alerts.map(
      (a) => safe`! quota ${a.level}: ${a.metric} ${a.used}/${a.limit} for the ${a.scope}, resets ${a.reset_at}`,
    ),
  ].join('\n');
}

/**
 * `gatehouse cloud connect|activate|deactivate|status|sync|disconnect`:
 * through the running service when there is one (admin key), else on the
 * data dir. The license key is never printed back (only its preview); to keep
 * it out of the shell's history, pass `-` and give it on stdin.
 */
export async function cloud(args: string[]): Promise<void> {
  const [sub, ...rest] = args;
  const { values, positionals } = parse(rest, {
    url: { type: 'string' },
    environment: { type: 'string' },
    'public-key': { type: 'string' },
    name: { type: 'string' },
  });
  const json = !!values.json;
  if (sub === 'connect' && !values.url) throw new UsageError('cloud connect needs --url GATEWAY_URL');
  if (values.environment !== undefined && values.environment !== 'production' && values.environment !== 'staging')
    throw new UsageError(`--environment must be production or staging (got '${String(values.environment)}')`);
  if (sub === 'activate' && !positionals[0])
    throw new UsageError('cloud activate needs a LICENSE_KEY (or - to read it from stdin)');
  const licenseKey =
    sub === 'activate' ? (positionals[0] === '-' ? await readSecretFromStdin('license key') : positionals[0]!) : '';
  await withConnection(values, async (c) => {
    if (sub === 'connect') {
      const r = unwrap(
        await c.dispatch('cloud.connect', {
          url: values.url!,
          ...(values.environment ? { environment: values.environment as 'production' } : {}),
          ...(values['public-key'] ? { public_key: values['public-key'] } : {}),
          ...(values.name ? { name: values.name } : {}),
        }),
      );
      return out(json, r, () =>
        [
          safe`Connected to ${r.gateway_url} (${r.environment}) as site ${r.site_id}.`,
          safe`Pinned gateway key ${r.pinned_key.kid ?? ''} (${r.pinned_key.source}): fingerprint ${r.pinned_key.fingerprint}`,
          'Compare the fingerprint with the one your gateway operator gives you.',
          r.first_sync.ok
            ? 'First sync: ok.'
            : safe`First sync failed: ${r.first_sync.code}: ${r.first_sync.message} (request ${r.first_sync.request_id ?? '-'}); the connection stands, retry with: gatehouse cloud sync`,
          'Next: gatehouse cloud activate LICENSE_KEY',
        ].join('\n'),
      );
    }
    if (sub === 'activate' || sub === 'deactivate') {
      const r = unwrap(
        sub === 'activate'
          ? await c.dispatch('cloud.activate', { license_key: licenseKey })
          : await c.dispatch('cloud.deactivate', {}),
      );
      const l = r.license;
      if (sub === 'deactivate')
        return out(
          json,
          r,
          () =>
            safe`License deactivated on this site: the free plan applies; its seat is free again (request ${r.request_id}).`,
        );
      return out(
        json,
        r,
        () =>
          safe`License ${l.key_preview ?? ''}: ${l.status}, plan ${l.plan ?? '-'}${l.license_expires_at ? `, expires ${l.license_expires_at}` : ''}${l.site_limit !== null ? `, ${l.sites_used ?? '?'} of ${l.site_limit} sites` : ''} (request ${r.request_id}).`,
      );
    }
    if (sub === 'status') {
      const s = unwrap(await c.dispatch('cloud.status', {}));
      return out(json, s, () => statusText(s));
    }
    if (sub === 'sync') {
      const r = unwrap(await c.dispatch('cloud.sync', {}));
      return out(json, r, () =>
        [
          safe`Usage: ${r.outbox.sent} event(s) sent, ${r.outbox.remaining} waiting${r.outbox.error ? safe` (stopped: ${r.outbox.error.code}: ${r.outbox.error.message})` : ''}.`,
          safe`Certificate: ${r.certificate} (request ${r.request_id}).`,
        ].join('\n'),
      );
    }
    if (sub === 'disconnect') {
      const r = unwrap(await c.dispatch('cloud.disconnect', {}));
      return out(json, r, () =>
        r.site_id === null
          ? 'Not connected: nothing to do.'
          : [
              safe`Disconnected site ${r.site_id}.`,
              r.remote.ok
                ? 'The gateway was told.'
                : safe`The gateway could not be told (${r.remote.code}: ${r.remote.message}); the site key stays valid there until its operator disconnects it.`,
              ...(r.unsent_events > 0 ? [safe`${r.unsent_events} usage event(s) could not be uploaded first.`] : []),
            ].join('\n'),
      );
    }
    throw new UsageError(
      `unknown cloud command '${sub ?? ''}': use connect, activate, deactivate, status, sync or disconnect`,
    );
  });
}
