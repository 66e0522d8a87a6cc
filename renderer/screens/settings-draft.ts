import { useState } from 'react';
import type { FormEvent } from 'react';
import { Settings } from '../../main/contract/index.ts';
import type { SettingsKey, SettingsPatch } from '../../main/contract/index.ts';
import { useApi } from '../lib/console-context.tsx';

/** The form's state: what a person typed, before it is a valid Settings. */
interface Draft {
  enabled: boolean;
  rate_limit: string;
  trust_proxy_headers: boolean;
  cors: string;
  disabled_tools: string[];
  approval_mode: string;
  audit_retention_days: string;
  audit_max_mb: string;
}

const toDraft = (s: Settings): Draft => ({
  enabled: s.enabled,
  rate_limit: String(s.rate_limit),
  trust_proxy_headers: s.trust_proxy_headers,
  cors: s.cors.join('\n'),
  disabled_tools: [...s.disabled_tools],
  approval_mode: s.approval_mode,
  audit_retention_days: String(s.audit_retention_days),
  audit_max_mb: String(s.audit_max_mb),
});

const list = (text: string) =>
  text
    .split(/[\s,]+/)
    .map((x) => x.trim())
    .filter(Boolean);
const num = (text: string) => (text.trim() === '' ? NaN : Number(text));

/** Validate the draft with the contract's schema; the patch holds only what changed. */
function draftToPatch(
  draft: Draft,
  current: Settings,
): { ok: true; patch: SettingsPatch } | { ok: false; errors: Partial<Record<SettingsKey, string>> } {
  const candidate = {
    enabled: draft.enabled,
    rate_limit: num(draft.rate_limit),
    trust_proxy_headers: draft.trust_proxy_headers,
    cors: list(draft.cors),
    disabled_tools: draft.disabled_tools,
    approval_mode: draft.approval_mode,
    audit_retention_days: num(draft.audit_retention_days),
    audit_max_mb: num(draft.audit_max_mb),
  };
  const parsed = Settings.safeParse(candidate);
  if (!parsed.success) {
    const errors: Partial<Record<SettingsKey, string>> = {};
    for (const issue of parsed.error.issues) {
      const key = issue.path[0] as SettingsKey;
      const message =
        issue.code === 'invalid_type' && issue.expected === 'number' ? 'enter a whole number' : issue.message;
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

/** The Settings form's draft: typing, checking against the contract, saving, undoing, and changes made elsewhere. */
export function useSettingsDraft(current: Settings, onSaved: (s: Settings) => void) {
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

  const undo = () => {
    setDraft(toDraft(current));
    setDirty(false);
    setErrors({});
    setStatus('Changes undone.');
  };
  return { draft, change, errors, status, failure, busy, dirty, submit, undo };
}
