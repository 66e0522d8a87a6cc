import { Settings, SettingsPatch, type Settings as SettingsT } from '../../contract/settings.ts';
import type { DocumentStore } from '../ports/ports.ts';
import type { OptionsData } from '../ports/options-data.ts';
import type { EventHub } from '../events.ts';
import { GatehouseError } from '../errors.ts';

/** Settings are read live on every request, so a change applies to the next one without a restart. */
export class SettingsService {
  constructor(
    private readonly store: DocumentStore<OptionsData>,
    private readonly events: EventHub,
  ) {}

  get(): SettingsT {
    return this.store.read().settings;
  }

  async update(patch: unknown): Promise<SettingsT> {
    const parsed = SettingsPatch.safeParse(patch);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new GatehouseError(
        'invalid_value',
        `invalid setting ${issue?.path.join('.') || ''}: ${issue?.message}`.replace('setting : ', 'settings: '),
      );
    }
    const next = await this.store.update((d) => {
      d.settings = Settings.parse({ ...d.settings, ...parsed.data });
      return d.settings;
    });
    this.events.emit({ type: 'settings', settings: next });
    return next;
  }
}
