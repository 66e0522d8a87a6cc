/** A URI an upstream lists: 1-2048 characters, no whitespace or control characters (they would not survive a client's handling). */
export const usableUri = (uri: unknown): uri is string =>
  typeof uri === 'string' && uri.length > 0 && uri.length <= 2048 && !/[\s\p{Cc}]/u.test(uri);
