import { DataTable } from '../../components/data-table.tsx';
import { shown } from '../../../main/contract/index.ts';
import type { CloudStatusView } from '../../../main/contract/index.ts';
import { breakerWords, certificateWords } from '../../lib/cloud-words.ts';
import { formatDateTime, plural } from '../../lib/format.ts';
import { PRODUCT_NAMES, cloudWords } from '../../lib/words.ts';
import { FailureText } from './cloud-failure.tsx';

/** The signed certificate the feature gates follow: when it was issued, when grants stop, and whether it is usable now. */
export function CertificateCard({ status }: { status: CloudStatusView }) {
  const cert = status.certificate;
  return (
    <section className="card" aria-labelledby="cl-cert">
      <h2 id="cl-cert">Certificate</h2>
      {!cert ? (
        <p className="state-warn">
          No certificate from the gateway yet. Sync now to fetch one; until then the free local policy applies.
        </p>
      ) : (
        <dl className="facts">
          <dt>State</dt>
          <dd className={cert.reason === 'ok' ? 'state-on' : 'state-warn'}>
            {certificateWords(cert.reason)}
            {cert.reason !== 'ok' ? <span className="detail"> ({cert.reason})</span> : null}
          </dd>
          <dt>Issued</dt>
          <dd>{formatDateTime(cert.issued_at)}</dd>
          <dt>Expires</dt>
          <dd>{formatDateTime(cert.cert_expires_at)}</dd>
          <dt>Features granted until</dt>
          <dd>{formatDateTime(cert.grants_until)}</dd>
          <dt>Update channel</dt>
          <dd>
            {cert.update.channel}{' '}
            {cert.update.eligible ? '(updates included)' : <span className="state-warn">(updates not included)</span>}
          </dd>
          <dt>Signed by key</dt>
          <dd>
            <code>{cert.kid}</code>
          </dd>
        </dl>
      )}
    </section>
  );
}

export function ProductsCard({ status }: { status: CloudStatusView }) {
  const products = Object.entries(status.products);
  return (
    <section className="card" aria-labelledby="cl-products">
      <h2 id="cl-products">Products</h2>
      {products.length === 0 ? (
        <p className="muted">The gateway has not named any product for this site yet.</p>
      ) : (
        <ul className="products">
          {products.map(([p, state]) => (
            <li key={p} className={state === 'active' ? 'state-on' : 'muted'}>
              <span className="product-name">{PRODUCT_NAMES[p] ?? p}</span>: {cloudWords(state)}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

/** Usage events waiting for upload; says so plainly when the outbox is full. */
export function OutboxCard({ status }: { status: CloudStatusView }) {
  const o = status.outbox;
  return (
    <section className="card" aria-labelledby="cl-outbox">
      <h2 id="cl-outbox">Usage outbox</h2>
      {o.full ? (
        <p className="state-warn" role="status">
          Full: {plural(o.refused_full, 'event was', 'events were')} not queued (each one is in the log). It drains once
          the gateway can be reached.
        </p>
      ) : null}
      <dl className="facts">
        <dt>Waiting</dt>
        <dd>
          {o.depth} of {o.capacity}
          {o.oldest_at ? <span className="detail"> (oldest {formatDateTime(o.oldest_at)})</span> : null}
          {o.uploading ? ' · uploading now' : null}
        </dd>
        <dt>Delivered</dt>
        <dd>
          {o.delivered}{' '}
          <span className="detail">
            ({o.accepted} accepted, {o.duplicate} already there)
          </span>
        </dd>
        <dt>Refused by the gateway</dt>
        <dd className={o.rejected ? 'state-warn' : undefined}>{o.rejected}</dd>
        <dt>Last upload</dt>
        <dd>{o.last_upload_at ? formatDateTime(o.last_upload_at) : 'never'}</dd>
      </dl>
      {o.recent_rejections.length ? (
        <ul className="warnings" aria-label="Recently refused events">
          {o.recent_rejections.map((r, i) => (
            <li key={`${r.event_id ?? 'none'}-${i}`}>
              {shown(r.message)}{' '}
              <span className="detail">
                ({shown(r.reason)}
                {r.event_id ? `, event ${shown(r.event_id)}` : ''})
              </span>
            </li>
          ))}
        </ul>
      ) : null}
    </section>
  );
}

/** Why the client stopped when it did: the circuit breaker, the clock, and the last errors with their request ids. */
export function ProblemsCard({ status }: { status: CloudStatusView }) {
  const { breaker, clock, last_errors: errors } = status;
  return (
    <section className="card wide" aria-labelledby="cl-problems">
      <h2 id="cl-problems">Requests and errors</h2>
      <dl className="facts">
        <dt>Requests</dt>
        <dd className={breaker.state === 'closed' ? undefined : 'state-warn'}>
          {breakerWords(breaker.state)}
          {breaker.state === 'open' && breaker.open_until ? `, until ${formatDateTime(breaker.open_until)}` : ''}
          {breaker.state !== 'closed' ? <span className="detail"> ({breaker.state})</span> : null}
        </dd>
        <dt>Clock</dt>
        <dd className={clock.set_back ? 'state-warn' : undefined}>
          {clock.set_back
            ? 'Set back: paid features are paused until it is right'
            : `In step with the gateway (${Math.round(clock.offset_ms / 1000)} s apart)`}
        </dd>
      </dl>
      {errors.length === 0 ? (
        <p className="muted">No errors.</p>
      ) : (
        <div className="table-scroll">
          <DataTable
            className="cloud-errors"
            caption="Last errors, newest first"
            captionHidden
            rows={errors}
            rowKey={(e) => `${e.request_id}-${e.at}`}
            columns={[
              { header: 'When', cell: (e) => formatDateTime(e.at) },
              {
                header: 'Request',
                cell: (e) => (
                  <>
                    <code>{e.operation}</code>
                    <span className="detail"> · {plural(e.attempts, 'attempt')}</span>
                  </>
                ),
              },
              { header: 'What happened', cell: (e) => <FailureText failure={e} /> },
            ]}
          />
        </div>
      )}
    </section>
  );
}
