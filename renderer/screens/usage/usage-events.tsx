import type { Stats } from '../../../main/contract/index.ts';
import { DataTable } from '../../components/data-table.tsx';

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
      <DataTable
        className="by-tool"
        rows={rows}
        rowKey={(r) => `${r.event}\n${r.feature}`}
        empty={
          <p className="empty">Nothing metered yet: tool calls, approved writes and AI answers are counted here.</p>
        }
        columns={[
          { header: 'What', rowHeader: true, title: (r) => r.event, cell: (r) => EVENT_LABELS[r.event] ?? r.event },
          { header: 'Feature', cell: (r) => r.feature },
          { header: 'Events', className: 'num', cell: (r) => r.events },
          {
            header: 'AI tokens in / out',
            className: 'num',
            cell: (r) => (r.tokens_input || r.tokens_output ? `${r.tokens_input} / ${r.tokens_output}` : '—'),
          },
        ]}
      />
    </section>
  );
}
