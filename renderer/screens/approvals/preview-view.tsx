import type { FieldChange, Preview } from '../../../main/contract/index.ts';
import { hunkLineKind, isHunkText, shown, showControlsByLine } from '../../../main/contract/index.ts';
import { showValue } from '../../lib/format.ts';
import { lineDiff, withContext } from './line-diff.ts';

/**
 * What a staged write would do, as a person reads it. Every value here is
 * text an agent chose (titles, bodies, arguments, field names that quote a
 * title): control characters and bidi overrides are shown as escapes, so the
 * diff cannot reorder, hide or fake what is written; line breaks stay.
 */
export function PreviewView({ preview, idBase }: { preview: Preview; idBase: string }) {
  if (preview.kind === 'arguments') {
    return (
      <div className="preview">
        <CurrentView preview={preview} idBase={idBase} />
        <h4 id={`${idBase}-args`}>Arguments sent to the tool</h4>
        <pre className="code-block" aria-labelledby={`${idBase}-args`} tabIndex={0}>
          {preview.arguments === undefined ? '(none)' : showControlsByLine(showValue(preview.arguments))}
        </pre>
      </div>
    );
  }
  if (preview.changes.length === 0) return <p className="muted">This preview lists no field changes.</p>;
  return (
    <>
      <CurrentView preview={preview} idBase={idBase} />
      <ChangesTable preview={preview} />
    </>
  );
}

/** What an upstream write's target is now, as the upstream's read tools showed it when the write was staged. */
function CurrentView({ preview, idBase }: { preview: Preview; idBase: string }) {
  const current = preview.current;
  if (!current) return null;
  return (
    <div className="preview-current">
      <p className={current.unavailable ? 'muted' : undefined}>{shown(current.summary)}</p>
      {current.states.map((s, i) => (
        <div key={i}>
          <h4 id={`${idBase}-now-${i}`}>{shown(s.label)}, now</h4>
          <pre className="code-block" aria-labelledby={`${idBase}-now-${i}`} tabIndex={0}>
            {showControlsByLine(s.text)}
          </pre>
        </div>
      ))}
    </div>
  );
}

function ChangesTable({ preview }: { preview: Preview }) {
  return (
    <table className="diff">
      <caption className="visually-hidden">Changes field by field</caption>
      <thead>
        <tr>
          <th scope="col">Field</th>
          <th scope="col">Before</th>
          <th scope="col">After</th>
        </tr>
      </thead>
      <tbody>
        {preview.changes.map((change, i) => (
          <ChangeRow key={`${change.field}-${i}`} change={change} />
        ))}
      </tbody>
    </table>
  );
}

/** A pre-made hunk text, its "- " / "+ " / "@@" lines coloured. */
function HunkText({ text }: { text: string }) {
  return (
    <pre className="line-diff">
      {text.split('\n').map((line, i) => {
        const kind = hunkLineKind(line);
        const op = kind === 'header' ? 'skip' : kind;
        return (
          <span key={i} className={`diff-${op}`}>
            {op === 'add' ? (
              <span className="visually-hidden">added: </span>
            ) : op === 'del' ? (
              <span className="visually-hidden">removed: </span>
            ) : null}
            {`${showControlsByLine(line)}\n`}
          </span>
        );
      })}
    </pre>
  );
}

function ChangeRow({ change }: { change: FieldChange }) {
  const { before, after } = change;
  if (isHunkText(before) || isHunkText(after)) {
    return (
      <tr>
        <th scope="row">{shown(change.field)}</th>
        <td className="before">
          {before === undefined ? <span className="muted">(none)</span> : <HunkText text={String(before)} />}
        </td>
        <td className="after">
          {after === undefined ? <span className="muted">(removed)</span> : <HunkText text={String(after)} />}
        </td>
      </tr>
    );
  }
  const long =
    typeof before === 'string' &&
    typeof after === 'string' &&
    (before.includes('\n') || after.includes('\n') || before.length + after.length > 160);
  const lines = long ? lineDiff(before, after) : null;
  if (lines) {
    return (
      <tr>
        <th scope="row">{shown(change.field)}</th>
        <td colSpan={2}>
          <pre className="line-diff" tabIndex={0} aria-label={`Changes to ${change.field}, line by line`}>
            {withContext(lines).map((l, i) =>
              l.op === 'skip' ? (
                <span key={i} className="diff-skip">{`… ${l.count} unchanged line${l.count === 1 ? '' : 's'}\n`}</span>
              ) : (
                <span key={i} className={`diff-${l.op}`}>
                  <span className="visually-hidden">
                    {l.op === 'add' ? 'added: ' : l.op === 'del' ? 'removed: ' : ''}
                  </span>
                  <span aria-hidden="true">{l.op === 'add' ? '+ ' : l.op === 'del' ? '- ' : '  '}</span>
                  {`${showControlsByLine(l.text)}\n`}
                </span>
              ),
            )}
          </pre>
        </td>
      </tr>
    );
  }
  return (
    <tr>
      <th scope="row">{change.field}</th>
      <td className="before">
        {before === undefined ? (
          <span className="muted">(none)</span>
        ) : (
          <pre>{showControlsByLine(showValue(before))}</pre>
        )}
      </td>
      <td className="after">
        {after === undefined ? (
          <span className="muted">(removed)</span>
        ) : (
          <pre>{showControlsByLine(showValue(after))}</pre>
        )}
      </td>
    </tr>
  );
}
