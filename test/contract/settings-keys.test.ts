import { describe, expect, it } from 'vitest';
import { SETTING_KINDS, SETTINGS_KEYS } from '../../main/contract/settings-keys.ts';
import { SETTINGS_DEFAULTS, Settings } from '../../main/contract/settings.ts';

// The settings' plain data (what `gatehouse settings` reads without zod) and the schema stay one list.
describe('the settings keys', () => {
  it('are the schema’s keys, in its order, each with the kind of its default', () => {
    expect([...SETTINGS_KEYS]).toEqual(Object.keys(Settings.shape));
    for (const key of SETTINGS_KEYS) {
      const value: unknown = SETTINGS_DEFAULTS[key];
      const kind = Array.isArray(value) ? 'list' : typeof value === 'string' ? 'text' : typeof value;
      expect({ key, kind: SETTING_KINDS[key] }).toEqual({ key, kind });
    }
  });
});
