/**
 * What Gatehouse keeps of a string a client chose (a tool name it made up, a
 * client name, a resource URI): control characters dropped, lone surrogates
 * (which strict JSON readers such as jq refuse) replaced with U+FFFD, and the
 * length bounded, without splitting a surrogate pair.
 */
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const NEEDS_WORK = /[\u0000-\u001f\u007f-\u009f\ud800-\udfff]/;
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

export function clientText(s: string, max: number): string {
  if (s.length <= max && !NEEDS_WORK.test(s)) return s;
  let t = (s.length > max * 2 ? s.slice(0, max * 2) : s).replace(CONTROL, '').replace(LONE_SURROGATE, '\ufffd');
  if (t.length > max) {
    t = t.slice(0, max);
    if (/[\ud800-\udbff]$/.test(t)) t = t.slice(0, -1);
  }
  return t;
}
