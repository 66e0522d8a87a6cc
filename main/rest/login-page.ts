import { createHash } from 'node:crypto';

/**
 * The page a used or expired console login link answers with: a styled page
 * that says what happened and how to get a new link, instead of plain text.
 * Self-contained (no script, one stylesheet allowed by its hash in the CSP),
 * so it needs nothing from the console build.
 */

const STYLE = `
:root { color-scheme: light dark; --bg: #f6f7f9; --card: #fff; --text: #1c2430; --muted: #5b6676; --accent: #2f5bd3; --border: #dde2ea; }
@media (prefers-color-scheme: dark) { :root { --bg: #11151b; --card: #1a2029; --text: #e6e9ef; --muted: #9aa5b5; --accent: #7c9cff; --border: #2c3440; } }
body { margin: 0; min-height: 100vh; display: grid; place-items: center; background: var(--bg); color: var(--text);
  font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
main { max-width: 32rem; margin: 1rem; padding: 1.5rem 1.75rem; background: var(--card); border: 1px solid var(--border); border-radius: 12px; }
h1 { font-size: 1.3rem; margin: 0 0 0.75rem; }
p { margin: 0.5rem 0; }
code { font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 0.92em; background: var(--bg); padding: 0.1rem 0.35rem; border-radius: 5px; }
.muted { color: var(--muted); font-size: 0.92rem; }
`;

/** A self-contained page: the shared style (allowed by its hash), no script, no form. */
function staticPage(status: number, title: string, inner: string) {
  return {
    status,
    headers: {
      'Content-Type': 'text/html; charset=utf-8',
      'Cache-Control': 'no-store',
      'Content-Security-Policy': `default-src 'none'; style-src 'sha256-${styleHash}'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
      'X-Content-Type-Options': 'nosniff',
      'Referrer-Policy': 'no-referrer',
    },
    body: `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · Gatehouse</title>
<style>${STYLE}</style>
</head>
<body>
<main>
${inner}
</main>
</body>
</html>
`,
  } as const;
}

const styleHash = createHash('sha256').update(STYLE).digest('base64');

export const USED_LINK_PAGE = staticPage(
  401,
  'Login link used up',
  `<h1>This login link has already been used or has expired</h1>
<p>Each console login link opens one session, once. To sign in again, get a new link:</p>
<p><code>gatehouse console-link</code></p>
<p class="muted">It is also printed when <code>gatehouse serve</code> starts. In the desktop app, open the console from the tray instead.</p>`,
);

/**
 * Where an approval link sends a browser without a console session: only a
 * person approves, so the person signs in first, with a one-time login link
 * opened in this browser, and comes back to the write (http-router.ts).
 */
export const SIGN_IN_TO_APPROVE_PAGE = staticPage(
  401,
  'Sign in to approve',
  `<h1>Sign in to decide on this write</h1>
<p>Only a person signed in to the Gatehouse console approves or discards a staged write. Get a one-time login link and open it in this browser:</p>
<p><code>gatehouse console-link</code></p>
<p class="muted">After signing in you come back to the write you were asked about. The link you followed grants nothing by itself.</p>`,
);
