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

export const fromCloudFailure = (f: CloudFailure): Failure => ({ code: f.code, message: f.message, request_id: f.request_id });

/** What failed, in words, then the service's own message, the code and the request id as details. */
export function FailureText({ failure }: { failure: Failure }) {
  const words = cloudErrorWords(failure.code, failure.message);
  return (
    <>
      {words}
      {words !== failure.message ? <>: {failure.message}</> : null}{' '}
      <span className="detail">
        (code {failure.code}
        {failure.request_id ? (
          <>
            , request id <code>{failure.request_id}</code>
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
