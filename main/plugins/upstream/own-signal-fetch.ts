/**
 * The `fetch` a remote upstream's SDK transport is handed, giving each request a signal of its own that follows the
 * transport's. The SDK passes its transport's one long-lived signal to every fetch, and fetch (undici) adds an abort
 * listener to it for each request that only goes when that request is garbage-collected: a busy upstream piled
 * thousands onto the one signal, Node warned "Possible EventTarget memory leak detected" after 1,500 calls, and each
 * new listener was added after a walk of the ones before. Here the transport's signal holds one listener per request
 * in flight: it goes when the answer's body is read to its end, fails, or is cancelled, and until then closing the
 * transport aborts the request as before.
 */
export function ownSignalFetch(base: typeof fetch = fetch): typeof fetch {
  return async (input, init) => {
    const outer = init?.signal;
    if (!outer || outer.aborted) return base(input, init);
    const own = new AbortController();
    const follow = () => own.abort(outer.reason);
    outer.addEventListener('abort', follow, { once: true });
    const release = () => outer.removeEventListener('abort', follow);
    let res: Response;
    try {
      res = await base(input, { ...init, signal: own.signal });
    } catch (e) {
      release();
      throw e;
    }
    if (!res.body) {
      release();
      return res;
    }
    return new Response(releasedAtEnd(res.body, release), {
      status: res.status,
      statusText: res.statusText,
      headers: res.headers,
    });
  };
}

/** The same bytes, with `release` called once when they end, fail or are cancelled. */
function releasedAtEnd(body: ReadableStream<Uint8Array>, release: () => void): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { value, done } = await reader.read();
        if (done) {
          release();
          controller.close();
        } else controller.enqueue(value);
      } catch (e) {
        release();
        controller.error(e);
      }
    },
    async cancel(reason) {
      release();
      await reader.cancel(reason);
    },
  });
}
