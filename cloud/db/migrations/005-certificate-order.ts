/**
 * Version 5: the time of a site's newest certificate. The app refuses a
 * certificate older than the one it holds (an old one replayed after a
 * revoke would otherwise restore the grants), so a site's certificates must
 * be issued in order even when they come from instances whose clocks differ
 * by a little, or from one whose clock stepped back: each is issued at the
 * later of now and just after the previous one.
 */
export const version = 5;
export const name = 'certificate-order';
export const sql = `
ALTER TABLE sites ADD COLUMN cert_issued_at timestamptz;
`;
