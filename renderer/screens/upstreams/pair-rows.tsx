import type { Pair } from './add-input.ts';

/**
 * Name/value rows (environment variables, HTTP headers). The values are
 * secrets: typed into password fields, sent once to the service, which keeps
 * them in the vault; nothing here ever shows one again.
 */
export function PairRows({
  legend,
  what,
  idBase,
  pairs,
  onChange,
  namePlaceholder,
  help,
  error,
}: {
  legend: string;
  /** one row's noun, for the buttons: "variable", "header" */
  what: string;
  idBase: string;
  pairs: Pair[];
  onChange: (pairs: Pair[]) => void;
  namePlaceholder: string;
  help: string;
  error?: string | undefined;
}) {
  const set = (i: number, change: Partial<Pair>) => onChange(pairs.map((p, j) => (j === i ? { ...p, ...change } : p)));
  return (
    <fieldset className="field pairs" aria-describedby={`${idBase}-help${error ? ` ${idBase}-error` : ''}`}>
      <legend>{legend}</legend>
      {pairs.map((p, i) => (
        <div className="pair-row" key={i}>
          <input
            aria-label={`${what} ${i + 1} name`}
            placeholder={namePlaceholder}
            value={p.name}
            maxLength={128}
            autoComplete="off"
            spellCheck={false}
            onChange={(e) => set(i, { name: e.target.value })}
          />
          <input
            aria-label={`${what} ${i + 1} value`}
            type="password"
            placeholder="value"
            value={p.value}
            autoComplete="new-password"
            onChange={(e) => set(i, { value: e.target.value })}
          />
          <button
            type="button"
            aria-label={`Remove ${what} ${i + 1}`}
            onClick={() => onChange(pairs.filter((_, j) => j !== i))}
          >
            Remove
          </button>
        </div>
      ))}
      <button type="button" onClick={() => onChange([...pairs, { name: '', value: '' }])}>
        Add a {what}
      </button>
      <p id={`${idBase}-help`} className="help">
        {help}
      </p>
      {error ? (
        <p id={`${idBase}-error`} className="field-error">
          {error}
        </p>
      ) : null}
    </fieldset>
  );
}
