import { showControls } from '../../main/contract/text.ts';
import { table } from '../../main/lib/text-table.ts';
import type { OperatorCommand } from '../services/operator.ts';

/**
 * What an operator command prints without --json: sentences and tables,
 * never a JSON dump (--json gives the data as it is, for scripts). Values
 * come from the database and from clients: shown with their control and
 * direction characters escaped.
 */
type D = Record<string, unknown>;
type Rows = D[];
/** A listing's rows: the records of an array answer. */
const rowsOf = (d: unknown): Rows =>
  Array.isArray(d) ? d.filter((r): r is D => typeof r === 'object' && r !== null && !Array.isArray(r)) : [];

const v = (x: unknown): string =>
  x === null || x === undefined || x === ''
    ? '-'
    : Array.isArray(x)
      ? x.length
        ? x.map(v).join(', ')
        : '(none)'
      : showControls(String(x));
/** A template whose interpolations go through v(). */
const say = (parts: TemplateStringsArray, ...vals: unknown[]) =>
  parts.reduce((out, p, i) => out + p + (i < vals.length ? v(vals[i]) : ''), '');
const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? '' : 's'}`;

function policy(d: D): string {
  const providers = d.ai_allowed_providers === null ? 'every enabled provider' : v(d.ai_allowed_providers);
  const lines = [
    say`Policy of account ${d.account_id} (in force):`,
    `  AI providers allowed: ${providers}`,
    say`  AI tags required:     ${d.ai_required_tags}`,
    say`  AI fallback order:    ${d.ai_fallback_order}`,
    say`  features off:         ${d.features_off}`,
    `  support priority:     ${d.support_priority === null ? "the plan's" : v(d.support_priority)}`,
  ];
  const layers = d.layers as { account?: D } | undefined;
  const own = layers?.account ?? {};
  const ownParts = Object.entries(own).filter(([, x]) => x !== null && !(Array.isArray(x) && x.length === 0));
  if (ownParts.length)
    lines.push(`The account narrowed it with its own key: ${ownParts.map(([k, x]) => `${k} ${v(x)}`).join('; ')}.`);
  return lines.join('\n');
}

function release(d: D, verb: string): string {
  return (
    say`Release ${d.product} ${d.version} on ${d.channel} ${verb}: ` +
    `${plural(Array.isArray(d.files) ? d.files.length : Number(d.files), 'file')}, offered to ${v(d.staging_percentage)}% of sites, signed by key ${v(d.kid)}.`
  );
}

const TABLES: Partial<Record<OperatorCommand, string[]>> = {
  'accounts.list': ['id', 'name', 'licenses', 'sites', 'created_at'],
  'licenses.list': [
    'id',
    'key_preview',
    'account_id',
    'plan_id',
    'status',
    'sites_used',
    'sites_allowed',
    'staging_used',
    'staging_allowed',
    'expires_at',
  ],
  'limits.list': ['scope', 'subject', 'metric', 'period', 'limit', 'updated_at'],
  'products.list': ['scope', 'subject', 'product', 'enabled', 'updated_at'],
  'sites.list': ['id', 'environment', 'status', 'url', 'account_id', 'license_id', 'version', 'last_sync_at'],
  'keys.show': ['kid', 'state', 'fingerprint', 'publish_until'],
  'accounts.keys.list': ['id', 'account_id', 'key_preview', 'label', 'created_at', 'last_used_at', 'revoked_at'],
  'releases.list': ['product', 'channel', 'version', 'staging_percentage', 'files', 'released_at'],
};

const SENTENCES: Partial<Record<OperatorCommand, (d: D) => string>> = {
  'accounts.add': (d) => say`Account ${d.id} (${d.name}) added.`,
  'licenses.create': (d) =>
    [
      say`License ${d.id} (plan ${d.plan_id}, account ${d.account_id}) created.`,
      `  key: ${v(d.license_key)}`,
      'The key is shown only now: give it to the customer and keep no copy.',
    ].join('\n'),
  'licenses.revoke': (d) =>
    say`License ${d.id} (plan ${d.plan_id}, account ${d.account_id}) is revoked: its sites lose the plan at their next request.`,
  'licenses.extend': (d) =>
    d.expires_at ? say`License ${d.id} now expires at ${d.expires_at}.` : say`License ${d.id} now never expires.`,
  'plans.list': (d) =>
    table(
      rowsOf(d).map((r) => ({
        ...r,
        features: (r.features as string[]).length,
        limits: (r.limits as unknown[]).length,
      })),
      ['id', 'rank', 'site_limit', 'products', 'features', 'limits', 'update_channels'],
    ),
  'plans.set': (d) =>
    say`Plan ${d.id} saved: rank ${d.rank}, ` +
    `${plural(Number(d.site_limit), 'site')}, ${plural((d.features as unknown[]).length, 'feature')}, ${plural((d.limits as unknown[]).length, 'limit')}; products ${v(d.products)}; channels ${v(d.update_channels)}.`,
  'limits.set': (d) =>
    'removed' in d
      ? d.removed
        ? 'The limit is removed.'
        : 'There was no such limit: nothing changed.'
      : say`Limit set: ${d.metric} at most ${d.limit} a ${d.period} for ${d.scope} ${d.subject}.`,
  'products.enable': (d) => say`Product ${d.product} is on for ${d.scope} ${d.subject}.`,
  'products.disable': (d) =>
    say`Product ${d.product} is off for ${d.scope} ${d.subject}: its features are refused at the next request.`,
  'sites.disconnect': (d) => say`Site ${d.site_id} is disconnected: its key no longer works and its seat is free.`,
  'sites.assign': (d) => say`Site ${d.id}: department ${d.department}, project ${d.project}.`,
  'keys.rotate': (d) =>
    say`Signing key ${d.active} is now active` +
    (d.retired ? say`; ${d.retired} is retired and stays published until its certificates expire` : '') +
    `. ${plural(Number(d.releases_resigned ?? 0), 'release')} re-signed.`,
  'providers.list': (d) => {
    const classes = Object.entries(d.classes as Record<string, string[]>).map(([k, m]) => `  ${v(k)}: ${v(m)}`);
    const over = ((d.overshoots as Rows | undefined) ?? []).map(
      (o) =>
        `  ${v(o.provider)}: ${v(o.count)} answer(s) over what was allowed, last ${v(o.last_at)} (worst: ${v(o.worst_reported_output)} output tokens where ${v(o.worst_allowed_output)} were allowed)`,
    );
    return [
      table(d.providers as Rows, ['id', 'kind', 'enabled', 'models', 'tags', 'api_key_env', 'base_url']),
      ...(classes.length ? ['', 'Model classes:', ...classes] : []),
      ...(over.length
        ? [
            '',
            'Providers that answered more tokens than allowed (recorded as reported, counted up to the hold, breaker opened):',
            ...over,
          ]
        : []),
    ].join('\n');
  },
  'providers.add': (d) =>
    say`Provider ${d.id} added (${d.kind}, ${d.enabled ? 'enabled' : 'disabled'}): models ${d.models}; tags ${d.tags}. Its key is read from $${d.api_key_env} when a call is made.`,
  'providers.remove': (d) => say`Provider ${d.id} removed.`,
  'providers.enable': (d) => say`Provider ${d.id} is enabled.`,
  'providers.disable': (d) => say`Provider ${d.id} is disabled: no route uses it until it is enabled.`,
  'providers.class': (d) =>
    Object.keys(d).length
      ? ['Model classes:', ...Object.entries(d).map(([k, m]) => `  ${v(k)}: ${v(m)}`)].join('\n')
      : 'No model classes.',
  'accounts.keys.create': (d) =>
    [
      say`Account key ${d.id} (account ${d.account_id}) created.`,
      `  key: ${v(d.account_key)}`,
      'The key is shown only now: give it to the account and keep no copy. It opens the agency and enterprise views.',
    ].join('\n'),
  'accounts.keys.revoke': (d) => say`Account key ${d.id} (account ${d.account_id}) is revoked.`,
  'accounts.policy.show': policy,
  'accounts.policy.set': policy,
  'releases.publish': (d) => release(d, 'published'),
  'releases.stage': (d) => release(d, 'staged'),
};

/** Every command's words; a command without its own falls back to `field: value` lines, still not JSON. */
export function operatorOutput(command: OperatorCommand, data: unknown): string {
  const columns = TABLES[command];
  if (columns) return table(data as Rows, columns);
  const sentence = SENTENCES[command];
  if (sentence) return sentence(data as D);
  return Object.entries(data as D)
    .map(
      ([k, x]) =>
        `${k}: ${
          typeof x === 'object' && x !== null && !Array.isArray(x)
            ? Object.entries(x)
                .map(([a, b]) => `${a} ${v(b)}`)
                .join('; ')
            : v(x)
        }`,
    )
    .join('\n');
}
