import type { Warning } from '../../main/contract/index.ts';
import { warningTitle } from '../lib/words.ts';

/** Health warnings: a title in words, the service's sentence (what to do), the code as a detail. */
export function WarningList({ warnings }: { warnings: readonly Warning[] }) {
  return (
    <ul className="warnings">
      {warnings.map((w) => (
        <li key={w.code}>
          <strong>{warningTitle(w.code)}.</strong> {w.message} <span className="detail">(code {w.code})</span>
        </li>
      ))}
    </ul>
  );
}
