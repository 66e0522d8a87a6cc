import type { Stats } from '../../../main/contract/index.ts';

/** What each usage event name means to a person (the names stay as details). */
export const EVENT_LABELS: Record<string, string> = {
  'mcp.tool.called': 'Tool calls that ran or staged a write',
  'mcp.write.confirmed': 'Staged writes applied after approval',
  'ai.generation.completed': 'AI answers (translation)',
  'translation.page.translated': 'Pages machine-translated',
};

/**
 * The local usage totals (usage events per name and feature): what the cloud
 * gateway will meter once connected, counted here meanwhile.
 */
export function UsageEvents({ usage }: { usage: Stats['usage'] }) {
  const rows = Object.entries(usage).flatMap(([event, byFeature]) =>
    Object.entries(byFeature).map(([feature, t]) => ({ event, feature, ...t })),
  );
  return (
    <section className="card" aria-labelledby="us-events">
      <h2 id="us-events">Metered usage</h2>
      {rows.length === 0 ? (
        <p className="empty">Nothing metered yet: tool calls, approved writes and AI answers are counted here.</p>
      ) : (
        <table className="by-tool">
          <thead>
            <tr>
              <th scope="col">What</th>
              <th scope="col">Feature</th>
              <th scope="col">Events</th>
              <th scope="col">AI tokens in / out</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => (
              <tr key={`${r.event}\n${r.feature}`}>
                <th scope="row" title={r.event}>
                  {EVENT_LABELS[r.event] ?? r.event}
                </th>
                <td>{r.feature}</td>
                <td className="num">{r.events}</td>
                <td className="num">
                  {r.tokens_input || r.tokens_output ? `${r.tokens_input} / ${r.tokens_output}` : '—'}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
