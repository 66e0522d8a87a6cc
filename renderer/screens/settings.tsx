import type { Settings, SettingsKey, ToolInfo } from '../../main/contract/index.ts';
import { ErrorBox, LoadState } from '../components/load-state.tsx';
import { useApi } from '../lib/console-context.tsx';
import { useApiEvents } from '../lib/use-events.ts';
import { useLoad } from '../lib/use-load.ts';
import { useSettingsDraft } from './settings-draft.ts';
import { ApprovalModeField, FieldHelp, HiddenToolsField, describedBy } from './settings-fields.tsx';

export function SettingsScreen() {
  const api = useApi();
  const settings = useLoad(() => api['settings.get']({}), [api]);
  const tools = useLoad(() => api['tools.list']({}), [api]);
  useApiEvents((event) => {
    if (event.type === 'settings') settings.update(() => event.settings);
  });
  return (
    <LoadState state={settings.state} what="settings" onRetry={settings.reload}>
      {(current) => (
        <SettingsForm
          current={current}
          tools={tools.state.status === 'ready' ? tools.state.data : []}
          onSaved={(s) => settings.update(() => s)}
        />
      )}
    </LoadState>
  );
}

function SettingsForm({
  current,
  tools,
  onSaved,
}: {
  current: Settings;
  tools: ToolInfo[];
  onSaved: (s: Settings) => void;
}) {
  const { draft, change, errors, status, failure, busy, dirty, submit, undo } = useSettingsDraft(current, onSaved);

  const help = (key: SettingsKey) => <FieldHelp field={key} error={errors[key]} />;
  const described = (key: SettingsKey) => describedBy(key, errors);

  return (
    <form className="card form settings" onSubmit={submit} noValidate aria-labelledby="st-title">
      <h2 id="st-title">Gateway settings</h2>
      <div className="field check">
        <input
          id="st-enabled"
          type="checkbox"
          checked={draft.enabled}
          onChange={(e) => change('enabled', e.target.checked)}
          aria-describedby={described('enabled')}
        />
        <label htmlFor="st-enabled">Gateway on</label>
        {help('enabled')}
      </div>
      <div className="field">
        <label htmlFor="st-rate">Rate limit (requests per minute)</label>
        <input
          id="st-rate"
          inputMode="numeric"
          value={draft.rate_limit}
          onChange={(e) => change('rate_limit', e.target.value)}
          aria-invalid={!!errors.rate_limit}
          aria-describedby={described('rate_limit')}
        />
        {help('rate_limit')}
      </div>
      <ApprovalModeField
        value={draft.approval_mode}
        onChange={(mode) => change('approval_mode', mode)}
        described={described('approval_mode')}
      >
        {help('approval_mode')}
      </ApprovalModeField>
      <div className="field">
        <label htmlFor="st-cors">Allowed browser origins</label>
        <textarea
          id="st-cors"
          rows={3}
          value={draft.cors}
          onChange={(e) => change('cors', e.target.value)}
          aria-invalid={!!errors.cors}
          aria-describedby={described('cors')}
          placeholder="https://app.example.com"
        />
        {help('cors')}
      </div>
      <HiddenToolsField
        tools={tools}
        hidden={draft.disabled_tools}
        onChange={(hidden) => change('disabled_tools', hidden)}
        described={described('disabled_tools')}
      >
        {help('disabled_tools')}
      </HiddenToolsField>
      <div className="field check">
        <input
          id="st-proxy"
          type="checkbox"
          checked={draft.trust_proxy_headers}
          onChange={(e) => change('trust_proxy_headers', e.target.checked)}
          aria-describedby={described('trust_proxy_headers')}
        />
        <label htmlFor="st-proxy">Trust proxy headers</label>
        {help('trust_proxy_headers')}
      </div>
      <div className="field">
        <label htmlFor="st-retention">Keep audit files (days)</label>
        <input
          id="st-retention"
          inputMode="numeric"
          value={draft.audit_retention_days}
          onChange={(e) => change('audit_retention_days', e.target.value)}
          aria-invalid={!!errors.audit_retention_days}
          aria-describedby={described('audit_retention_days')}
        />
        {help('audit_retention_days')}
      </div>
      <div className="field">
        <label htmlFor="st-audit-cap">Most the audit files may take (MiB, 0: no cap)</label>
        <input
          id="st-audit-cap"
          inputMode="numeric"
          value={draft.audit_max_mb}
          onChange={(e) => change('audit_max_mb', e.target.value)}
          aria-invalid={!!errors.audit_max_mb}
          aria-describedby={described('audit_max_mb')}
        />
        {help('audit_max_mb')}
      </div>
      {failure ? <ErrorBox message={`Could not save: ${failure}`} /> : null}
      <div className="form-buttons">
        <button type="submit" className="primary" disabled={busy}>
          {busy ? 'Saving…' : 'Save settings'}
        </button>
        <button type="button" disabled={!dirty || busy} onClick={undo}>
          Undo changes
        </button>
        <span role="status" className="form-status">
          {status}
        </span>
      </div>
    </form>
  );
}
