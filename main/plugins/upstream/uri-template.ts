/**
 * Whether a URI is one expansion of an RFC 6570 URI template (levels 1-4): the literal parts must match
 * exactly, and each expression stands for what its operator can produce. Used to decide whether a
 * resources/read names a resource the upstream offered through one of its templates. The template comes
 * from the upstream, so no regular expression is built from it: a run of expressions as regex stars
 * backtracks polynomially on a URI that does not match. This walks every position at once instead, in
 * time linear in the URI times the template's length.
 */
type Piece =
  | { kind: 'literal'; char: string }
  /** empty, or `lead` (when set) followed by any run of characters `allowed` accepts */
  | { kind: 'expression'; lead: string | null; allowed: (c: string) => boolean };

const simple = (c: string) => c !== '/' && c !== '?' && c !== '#';
const anyChar = () => true;
const notFragment = (c: string) => c !== '#';
const notQueryOrFragment = (c: string) => c !== '?' && c !== '#';

const OPERATORS: Record<string, Omit<Extract<Piece, { kind: 'expression' }>, 'kind'>> = {
  '': { lead: null, allowed: simple },
  '+': { lead: null, allowed: anyChar },
  '#': { lead: '#', allowed: anyChar },
  '.': { lead: '.', allowed: simple },
  '/': { lead: '/', allowed: notQueryOrFragment },
  ';': { lead: ';', allowed: simple },
  '?': { lead: '?', allowed: notFragment },
  '&': { lead: '&', allowed: notFragment },
};

const EXPRESSION = /\{([+#./;?&]?)[^{}]*\}/g;

/** The template's pieces, or null when it is malformed (an unmatched brace). */
function piecesOf(template: string): Piece[] | null {
  const pieces: Piece[] = [];
  const literal = (text: string): boolean => {
    if (/[{}]/.test(text)) return false;
    for (const char of text) pieces.push({ kind: 'literal', char });
    return true;
  };
  let last = 0;
  for (const m of template.matchAll(EXPRESSION)) {
    if (!literal(template.slice(last, m.index))) return null;
    pieces.push({ kind: 'expression', ...OPERATORS[m[1]!]! });
    last = m.index + m[0].length;
  }
  return literal(template.slice(last)) ? pieces : null;
}

/** Pieces per template, so a read does not parse every listed template again (bounded: templates are the upstreams'). */
const PIECES = new Map<string, Piece[] | null>();
function cachedPieces(template: string): Piece[] | null {
  let pieces = PIECES.get(template);
  if (pieces === undefined) {
    pieces = piecesOf(template);
    if (PIECES.size >= 2000) PIECES.delete(PIECES.keys().next().value!);
    PIECES.set(template, pieces);
  }
  return pieces;
}

export function matchesTemplate(template: string, uri: string): boolean {
  if (template.length > 2048 || uri.length > 8192) return false;
  const pieces = cachedPieces(template);
  if (!pieces) return false;
  // A state is 2*i (at the start of piece i) or 2*i+1 (inside expression i, its lead already read).
  const closure = (states: Set<number>): Set<number> => {
    const out = new Set<number>();
    const add = (s: number) => {
      if (out.has(s)) return;
      out.add(s);
      const i = s >> 1;
      if (i < pieces.length && pieces[i]!.kind === 'expression') add(2 * (i + 1)); // empty, or done with it
    };
    for (const s of states) add(s);
    return out;
  };
  let states = closure(new Set([0]));
  for (const c of uri) {
    const next = new Set<number>();
    for (const s of states) {
      const i = s >> 1;
      const p = pieces[i];
      if (!p) continue;
      if (p.kind === 'literal') {
        if (p.char === c) next.add(2 * (i + 1));
      } else if (s % 2 === 0 && p.lead !== null) {
        if (c === p.lead) next.add(2 * i + 1);
      } else if (p.allowed(c)) next.add(2 * i + 1);
    }
    if (!next.size) return false;
    states = closure(next);
  }
  return states.has(2 * pieces.length);
}
