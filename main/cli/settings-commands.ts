import { SETTING_KINDS, SETTINGS_HELP, SETTINGS_KEYS, type SettingsKey } from '../contract/settings-keys.ts';
import { GatehouseError } from '../core/errors.ts';
import { safe, unwrap, UsageError } from './output.ts';
import { out, parse, withConnection } from './args.ts';

/** A setting's value from its command-line spelling, checked against the setting's type. */
function settingValue(key: string, raw: string): unknown {
  if (!(SETTINGS_KEYS as readonly string[]).includes(key))
    throw new GatehouseError('invalid_value', `unknown setting '${key}'; settings are: ${SETTINGS_KEYS.join(', ')}`);
  const kind = SETTING_KINDS[key as SettingsKey];
  if (kind === 'list')
    return raw
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
  if (kind === 'boolean') {
    if (!['true', 'false', 'on', 'off', '1', '0'].includes(raw))
      throw new GatehouseError('invalid_value', `${key} takes true or false (got '${raw}')`);
    return ['true', 'on', '1'].includes(raw);
  }
  if (kind === 'number') {
    if (!/^-?\d+$/.test(raw)) throw new GatehouseError('invalid_value', `${key} takes a whole number (got '${raw}')`);
    return Number(raw);
  }
  return raw;
}

/** `gatehouse settings get|set` */
export async function settings(args: string[]): Promise<void> {
  const [sub, ...rest] = args;
  const { values, positionals } = parse(rest, {});
  const json = !!values.json;
  const [key, raw] = positionals;
  if (sub === 'set' && (!key || raw === undefined))
    throw new UsageError('settings set needs KEY and VALUE, e.g. settings set rate_limit 60');
  const patch = sub === 'set' ? { [key!]: settingValue(key!, raw!) } : {};
  await withConnection(values, async (c) => {
    if (sub === 'get') {
      const s = unwrap(await c.dispatch('settings.get', {}));
      if (key) {
        // Not `key in s`: that is true for 'constructor' and 'toString' too.
        if (!(SETTINGS_KEYS as readonly string[]).includes(key))
          throw new GatehouseError(
            'invalid_value',
            `unknown setting '${key}'; settings are: ${SETTINGS_KEYS.join(', ')}`,
          );
        const v = s[key as SettingsKey];
        return out(json, { [key]: v }, () => safe`${Array.isArray(v) ? v.join(',') : String(v)}`);
      }
      return out(json, s, () =>
        SETTINGS_KEYS.map(
          (k) =>
            safe`${k} = ${Array.isArray(s[k]) ? (s[k] as string[]).join(',') : String(s[k])}` +
            `\n    ${SETTINGS_HELP[k]}`,
        ).join('\n'),
      );
    }
    if (sub === 'set') {
      const s = unwrap(await c.dispatch('settings.update', patch));
      return out(json, s, () => safe`${key} = ${JSON.stringify(s[key as SettingsKey])}`);
    }
    throw new UsageError(`unknown settings command '${sub ?? ''}': use get or set`);
  });
}
