/**
 * The console's Content Security Policy, one string for every place that
 * sends it: the service's `/console/` responses, the Electron session's
 * response headers and the `<meta>` tag in renderer/index.html. Nothing
 * inline: the built console is only `<script src>` and `<link rel=stylesheet>`.
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * The same policy for a `<meta http-equiv>` tag. Browsers ignore
 * `frame-ancestors` there (and log an error saying so), so the meta copy
 * leaves it out; the header carries it.
 */
export const CONSOLE_CSP_META = CONSOLE_CSP.split('; ')
  .filter((d) => !d.startsWith('frame-ancestors'))
  .join('; ');
