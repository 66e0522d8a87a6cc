import { useState } from 'react';
import type { FormEvent } from 'react';
import { ApprovalMode, SETTINGS_HELP, Settings } from '../../main/contract/index.ts';
import type { SettingsKey, SettingsPatch, ToolInfo } from '../../main/contract/index.ts';
import { ErrorBox, LoadState } from '../components/load-state.tsx';
import { useApi } from '../lib/console-context.tsx';
import { useApiEvents } from '../lib/use-events.ts';
import { useLoad } from '../lib/use-load.ts';

/** The form's state: what a person typed, before it is a valid Settings. */
interface Draft {
  enabled: boolean;
  rate_limit: string;
  trust_proxy_headers: boolean;
  cors: string;
  disabled_tools: string[];
  approval_mode: string;
  audit_retention_days: string;
}

const toDraft = (s: Settings): Draft => ({
  enabled: s.enabled,
  rate_limit: String(s.rate_limit),
  trust_proxy_headers: s.trust_proxy_headers,
  cors: s.cors.join('\n'),
  disabled_tools: [...s.disabled_tools],
  approval_mode: s.approval_mode,
  audit_retention_days: String(s.audit_retention_days),
});

const list = (text: string) => text.split(/[\s,]+/).map((x) => x.trim()).filter(Boolean);
const num = (text: string) => (text.trim() === '' ? NaN : Number(text));

/** Validate the draft with the contract's schema; the patch holds only what changed. */
function draftToPatch(draft: Draft, current: Settings): { ok: true; patch: SettingsPatch } | { ok: false; errors: Partial<Record<SettingsKey, string>> } {
  const candidate = {
    enabled: draft.enabled,
    rate_limit: num(draft.rate_limit),
    trust_proxy_headers: draft.trust_proxy_headers,
    cors: list(draft.cors),
    disabled_tools: draft.disabled_tools,
    approval_mode: draft.approval_mode,
    audit_retention_days: num(draft.audit_retention_days),
  };
  const parsed = Settings.safeParse(candidate);
  if (!parsed.success) {
    const errors: Partial<Record<SettingsKey, string>> = {};
    for (const issue of parsed.error.issues) {
      const key = issue.path[0] as SettingsKey;
      const message = issue.code === 'invalid_type' && issue.expected === 'number' ? 'enter a whole number' : issue.message;
      errors[key] ??= message;
    }
    return { ok: false, errors };
  }
  const patch: Record<string, unknown> = {};
  for (const key of Object.keys(parsed.data) as SettingsKey[]) {
    if (JSON.stringify(parsed.data[key]) !== JSON.stringify(current[key])) patch[key] = parsed.data[key];
  }
  return { ok: true, patch: patch as SettingsPatch };
}

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

function SettingsForm({ current, tools, onSaved }: { current: Settings; tools: ToolInfo[]; onSaved: (s: Settings) => void }) {
  const api = useApi();
  const [draft, setDraft] = useState<Draft>(() => toDraft(current));
  const [dirty, setDirty] = useState(false);
  const [errors, setErrors] = useState<Partial<Record<SettingsKey, string>>>({});
  const [status, setStatus] = useState('');
  const [failure, setFailure] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  // Changes made elsewhere (tray, CLI, another window) show up unless you are editing. Adjusted during
  // render, not in an effect: an effect still pending from the first render ran after a keystroke that came
  // right after the screen appeared, and put the old value back over it (a cleared field became "120" again).
  const [shown, setShown] = useState(current);
  if (shown !== current) {
    setShown(current);
    if (!dirty) setDraft(toDraft(current));
  }

  const change = <K extends keyof Draft>(key: K, value: Draft[K]) => {
    setDraft((d) => ({ ...d, [key]: value }));
    setDirty(true);
    setStatus('');
  };

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setFailure(null);
    const checked = draftToPatch(draft, current);
    if (!checked.ok) {
      setErrors(checked.errors);
      setStatus('Some values need fixing; nothing was saved.');
      return;
    }
    setErrors({});
    if (Object.keys(checked.patch).length === 0) {
      setDirty(false);
      setStatus('Nothing changed.');
      return;
    }
    setBusy(true);
    const result = await api['settings.update'](checked.patch);
    setBusy(false);
    if (!result.ok) {
      setFailure(`${result.message} (${result.code})`);
      return;
    }
    setDirty(false);
    onSaved(result.data);
    setStatus('Saved.');
  };

  const help = (key: SettingsKey) => (
    <>
      <p id={`st-${key}-help`} className="help">
        {/* the shared text is written for the CLI; here lists are checkboxes or one entry per line */}
        {SETTINGS_HELP[key].replace(' (comma-separated)', '')}
      </p>
      {errors[key] ? (
        <p id={`st-${key}-error`} className="field-error">
          {errors[key]}
        </p>
      ) : null}
    </>
  );
  const described = (key: SettingsKey) => `st-${key}-help${errors[key] ? ` st-${key}-error` : ''}`;
  const toolNames = [...new Set([...tools.map((t) => t.name), ...draft.disabled_tools])].sort();

  return (
    <form className="card form settings" onSubmit={submit} noValidate aria-labelledby="st-title">
      <h2 id="st-title">Gateway settings</h2>
      <div className="field check">
        <input id="st-enabled" type="checkbox" checked={draft.enabled} onChange={(e) => change('enabled', e.target.checked)} aria-describedby={described('enabled')} />
        <label htmlFor="st-enabled">Gateway on</label>
        {help('enabled')}
      </div>
      <div className="field">
        <label htmlFor="st-rate">Rate limit (requests per minute)</label>
        <input id="st-rate" inputMode="numeric" value={draft.rate_limit} onChange={(e) => change('rate_limit', e.target.value)} aria-invalid={!!errors.rate_limit} aria-describedby={described('rate_limit')} />
        {help('rate_limit')}
      </div>
      <fieldset className="field">
        <legend>Approval mode</legend>
        {ApprovalMode.options.map((mode) => (
          <div key={mode} className="check">
            <input id={`st-mode-${mode}`} type="radio" name="approval_mode" value={mode} checked={draft.approval_mode === mode} onChange={() => change('approval_mode', mode)} aria-describedby={described('approval_mode')} />
            <label htmlFor={`st-mode-${mode}`}>{mode === 'admin' ? 'A person approves (admin)' : 'The agent’s user may confirm (agent)'}</label>
          </div>
        ))}
        {help('approval_mode')}
      </fieldset>
      <div className="field">
        <label htmlFor="st-cors">Allowed browser origins</label>
        <textarea id="st-cors" rows={3} value={draft.cors} onChange={(e) => change('cors', e.target.value)} aria-invalid={!!errors.cors} aria-describedby={described('cors')} placeholder="https://app.example.com" />
        {help('cors')}
      </div>
      <fieldset className="field">
        <legend>Hidden tools</legend>
        {toolNames.length === 0 ? <p className="muted">No tools are registered.</p> : null}
        <div className="tool-checks">
          {toolNames.map((name) => (
            <div key={name} className="check">
              <input
                id={`st-tool-${name}`}
                type="checkbox"
                checked={draft.disabled_tools.includes(name)}
                onChange={(e) => change('disabled_tools', e.target.checked ? [...draft.disabled_tools, name] : draft.disabled_tools.filter((t) => t !== name))}
                aria-describedby={described('disabled_tools')}
              />
              <label htmlFor={`st-tool-${name}`}>{name}</label>
            </div>
          ))}
        </div>
        {help('disabled_tools')}
      </fieldset>
      <div className="field check">
        <input id="st-proxy" type="checkbox" checked={draft.trust_proxy_headers} onChange={(e) => change('trust_proxy_headers', e.target.checked)} aria-describedby={described('trust_proxy_headers')} />
        <label htmlFor="st-proxy">Trust proxy headers</label>
        {help('trust_proxy_headers')}
      </div>
      <div className="field">
        <label htmlFor="st-retention">Keep audit files (days)</label>
        <input id="st-retention" inputMode="numeric" value={draft.audit_retention_days} onChange={(e) => change('audit_retention_days', e.target.value)} aria-invalid={!!errors.audit_retention_days} aria-describedby={described('audit_retention_days')} />
        {help('audit_retention_days')}
      </div>
      {failure ? <ErrorBox message={`Could not save: ${failure}`} /> : null}
      <div className="form-buttons">
        <button type="submit" className="primary" disabled={busy}>
          {busy ? 'Saving…' : 'Save settings'}
        </button>
        <button
          type="button"
          disabled={!dirty || busy}
          onClick={() => {
            setDraft(toDraft(current));
            setDirty(false);
            setErrors({});
            setStatus('Changes undone.');
          }}
        >
          Undo changes
        </button>
        <span role="status" className="form-status">
          {status}
        </span>
      </div>
    </form>
  );
}
