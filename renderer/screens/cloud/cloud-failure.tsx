import { shown } from '../../../main/contract/index.ts';
import type { CloudFailure, Result } from '../../../main/contract/index.ts';
import { cloudErrorWords } from '../../lib/cloud-words.ts';

/** A failed action or a failed part of an answer, with the request id to quote when the gateway saw it. */
export interface Failure {
  code: string;
  message: string;
  request_id: string | null;
}

/** The failure of a Result, with `details.request_id` when the service gave one. */
export function failureOf(result: Extract<Result<unknown>, { ok: false }>): Failure {
  const id = result.details?.request_id;
  return { code: result.code, message: result.message, request_id: typeof id === 'string' ? id : null };
}

export const fromCloudFailure = (f: CloudFailure): Failure => ({
  code: f.code,
  message: f.message,
  request_id: f.request_id,
});

/** What failed, in words, then the service's own message, the code and the request id as details. */
export function FailureText({ failure }: { failure: Failure }) {
  // the message may come from the gateway: control characters are shown, never obeyed
  const message = shown(failure.message);
  const words = cloudErrorWords(failure.code, message);
  return (
    <>
      {words}
      {words !== message ? <>: {message}</> : null}{' '}
      <span className="detail">
        (code {shown(failure.code)}
        {failure.request_id ? (
          <>
            , request id <code>{shown(failure.request_id)}</code>
          </>
        ) : null}
        )
      </span>
    </>
  );
}

export function FailureBox({ title, failure }: { title: string; failure: Failure }) {
  return (
    <div className="error-box" role="alert">
      <p>
        <strong>{title}.</strong> <FailureText failure={failure} />
      </p>
    </div>
  );
}
