import type { Warning } from '../../main/contract/index.ts';
import { warningTitle } from '../lib/words.ts';

/** Where a warning is dealt with in the console, when it has a screen of its own. */
const WARNING_LINKS: Record<string, { href: string; text: string }> = {
  definitions_review: { href: '#upstreams', text: 'Review them in Upstreams' },
};

/** Health warnings: a title in words, the service's sentence (what to do), the code as a detail. */
export function WarningList({ warnings }: { warnings: readonly Warning[] }) {
  return (
    <ul className="warnings">
      {warnings.map((w) => {
        const link = WARNING_LINKS[w.code];
        return (
          <li key={w.code}>
            <strong>{warningTitle(w.code)}.</strong> {w.message} <span className="detail">(code {w.code})</span>
            {link ? (
              <>
                {' '}
                <a href={link.href}>{link.text}</a>
              </>
            ) : null}
          </li>
        );
      })}
    </ul>
  );
}
