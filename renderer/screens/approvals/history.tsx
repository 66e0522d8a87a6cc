import { memo } from 'react';
import { principalLabel, type StagedPayload } from '../../../main/contract/index.ts';
import { shown } from '../../../main/contract/index.ts';
import { errorWords } from '../../lib/words.ts';
import { TimeAgoCell } from '../../components/time-ago-cell.tsx';
import { DataTable } from '../../components/data-table.tsx';

const LABEL: Record<StagedPayload['status'], string> = {
  pending: 'pending',
  applying: 'applying',
  confirmed: 'approved',
  discarded: 'discarded',
  expired: 'expired',
  failed: 'failed',
};

/** The most recent decisions; older ones are in the audit log. */
export const DecisionHistory = memo(function DecisionHistory({ items }: { items: StagedPayload[] }) {
  return (
    <section aria-labelledby="ap-history" className="history">
      <h2 id="ap-history">Recent decisions</h2>
      <DataTable
        rows={items}
        rowKey={(item) => item.id}
        empty={<p className="muted">No decisions yet.</p>}
        columns={[
          {
            header: 'Decision',
            cell: (item) => (
              <>
                <span className={`badge result-${item.status}`}>{LABEL[item.status]}</span>
                {item.settlement ? (
                  <span className="reason">
                    : settled by a person,{' '}
                    {item.settlement.outcome === 'applied' ? 'it was applied' : 'it was not applied'}{' '}
                    <span className="code">(was {item.settlement.was})</span>
                  </span>
                ) : null}
                {item.error_code ? (
                  <span className="reason">
                    : {errorWords(item.error_code)} <span className="code">({item.error_code})</span>
                    {item.error_message ? <span className="error-message">: {shown(item.error_message)}</span> : null}
                  </span>
                ) : null}
              </>
            ),
          },
          { header: 'Tool', cell: (item) => shown(item.tool) },
          { header: 'What', cell: (item) => shown(item.preview.summary) },
          {
            header: 'By',
            cell: (item) =>
              item.decided_by ? principalLabel(item.decided_by) : item.status === 'expired' ? 'time' : '',
          },
          { header: 'When', ownCell: true, cell: (item) => <TimeAgoCell at={item.decided_at ?? item.expires_at} /> },
        ]}
      />
      <p>
        <a href="#activity">Full history in Activity</a>
      </p>
    </section>
  );
});
