import { CLOUD_BASE_PATH } from '../contract/cloud/paths.ts';
import { GatehouseError } from '../core/errors.ts';

/**
 * `gatehouse cloud connect --url GATEWAY_URL`: the gateway's base address
 * (`{gateway_url}`), with or without the `/gateway/v1` suffix. https, or
 * http to a loopback address only: the license key travels in the activate
 * request's body, and a signed grant is only as private as its channel.
 */
const LOOPBACK = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\])$/i;

export function normalizeGatewayUrl(text: string, opts: { allowInsecureHttp?: boolean } = {}): string {
  const bad = (why: string) => new GatehouseError('invalid_value', `--url: ${why}`);
  if (typeof text !== 'string' || text.length === 0 || text.length > 2048)
    throw bad('give the gateway address, e.g. https://gateway.example.com');
  let u: URL;
  try {
    u = new URL(text.trim());
  } catch {
    throw bad('not a URL; give the gateway address, e.g. https://gateway.example.com');
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:') throw bad('the gateway is reached over https');
  if (u.protocol === 'http:' && !LOOPBACK.test(u.hostname) && !opts.allowInsecureHttp)
    throw bad('plain http is allowed only to this machine (localhost, 127.x, [::1]); use https');
  if (u.username || u.password) throw bad('credentials do not belong in the gateway URL');
  if (u.search || u.hash) throw bad('the gateway URL takes no query or fragment');
  let path = u.pathname.replace(/\/+$/, '');
  if (path.endsWith(CLOUD_BASE_PATH)) path = path.slice(0, -CLOUD_BASE_PATH.length);
  return `${u.protocol}//${u.host}${path}`;
}
