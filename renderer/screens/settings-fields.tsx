import type { ReactNode } from 'react';
import { ApprovalMode, SETTINGS_HELP } from '../../main/contract/index.ts';
import type { SettingsKey, ToolInfo } from '../../main/contract/index.ts';

/** The Settings form's fields that are more than one input, and the help and error lines under every field. */

export const describedBy = (key: SettingsKey, errors: Partial<Record<SettingsKey, string>>): string =>
  `st-${key}-help${errors[key] ? ` st-${key}-error` : ''}`;

export function FieldHelp({ field, error }: { field: SettingsKey; error: string | undefined }) {
  return (
    <>
      <p id={`st-${field}-help`} className="help">
        {/* the shared text is written for the CLI; here lists are checkboxes or one entry per line */}
        {SETTINGS_HELP[field].replace(' (comma-separated)', '')}
      </p>
      {error ? (
        <p id={`st-${field}-error`} className="field-error">
          {error}
        </p>
      ) : null}
    </>
  );
}

export function ApprovalModeField({
  value,
  onChange,
  described,
  children,
}: {
  value: string;
  onChange: (mode: ApprovalMode) => void;
  described: string;
  children: ReactNode;
}) {
  return (
    <fieldset className="field">
      <legend>Approval mode</legend>
      {ApprovalMode.options.map((mode) => (
        <div key={mode} className="check">
          <input
            id={`st-mode-${mode}`}
            type="radio"
            name="approval_mode"
            value={mode}
            checked={value === mode}
            onChange={() => onChange(mode)}
            aria-describedby={described}
          />
          <label htmlFor={`st-mode-${mode}`}>
            {mode === 'admin' ? 'A person approves (admin)' : 'The agent’s user may confirm (agent)'}
          </label>
        </div>
      ))}
      {children}
    </fieldset>
  );
}

/** One checkbox per tool (registered ones, and hidden names no plugin registers now). */
export function HiddenToolsField({
  tools,
  hidden,
  onChange,
  described,
  children,
}: {
  tools: ToolInfo[];
  hidden: string[];
  onChange: (hidden: string[]) => void;
  described: string;
  children: ReactNode;
}) {
  const toolNames = [...new Set([...tools.map((t) => t.name), ...hidden])].sort();
  return (
    <fieldset className="field">
      <legend>Hidden tools</legend>
      {toolNames.length === 0 ? <p className="muted">No tools are registered.</p> : null}
      <div className="tool-checks">
        {toolNames.map((name) => (
          <div key={name} className="check">
            <input
              id={`st-tool-${name}`}
              type="checkbox"
              checked={hidden.includes(name)}
              onChange={(e) => onChange(e.target.checked ? [...hidden, name] : hidden.filter((t) => t !== name))}
              aria-describedby={described}
            />
            <label htmlFor={`st-tool-${name}`}>{name}</label>
          </div>
        ))}
      </div>
      {children}
    </fieldset>
  );
}
