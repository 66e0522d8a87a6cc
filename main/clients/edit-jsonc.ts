import { applyEdits, findNodeAtLocation, format, modify, parseTree, type FormattingOptions } from 'jsonc-parser';

/**
 * Edits of one servers object in a JSON or JSONC file, made on the text with
 * jsonc-parser's `modify` (VS Code's own editor): only the entry's own bytes
 * change; comments, other keys, trailing commas and the file's formatting
 * stay. The inserted text alone is formatted like the lines around it.
 */

/** The file's own indentation and line ends, so an edit looks like the lines around it. */
function formattingOf(text: string): FormattingOptions {
  const m = text.match(/\n([ \t]+)["/]/);
  const indent = m ? m[1]! : '  ';
  return {
    insertSpaces: !indent.includes('\t'),
    tabSize: indent.includes('\t') ? 1 : indent.length,
    eol: text.includes('\r\n') ? '\r\n' : '\n',
  };
}

/**
 * Takes `servers[name]` out with its own line(s) and its comma, nothing else.
 * (jsonc-parser's own removal of a first property also eats the line break
 * after the `{`, which changes a line that is not the entry's.)
 */
function removeProperty(text: string, path: readonly string[], name: string): string {
  const root = parseTree(text, [], { allowTrailingComma: true, disallowComments: false });
  const value = root && findNodeAtLocation(root, [...path, name]);
  const prop = value?.parent;
  const object = prop?.parent;
  if (!prop || !object?.children) return text;
  let start = prop.offset;
  let end = prop.offset + prop.length;
  let j = end;
  while (text[j] === ' ' || text[j] === '\t') j++;
  const comma = text[j] === ',';
  if (comma) end = j + 1;
  let k = end;
  while (text[k] === ' ' || text[k] === '\t') k++;
  const lineStart = text.lastIndexOf('\n', start - 1) + 1;
  const eol = text.startsWith('\r\n', k) ? 2 : text[k] === '\n' ? 1 : 0;
  if (/^[ \t]*$/.test(text.slice(lineStart, start)) && eol) {
    start = lineStart;
    end = k + eol;
  }
  let out = text.slice(0, start) + text.slice(end);
  // The last property without a comma of its own: the comma before it goes instead.
  const at = object.children.indexOf(prop);
  if (!comma && at > 0) {
    const prev = object.children[at - 1]!;
    const c = text.indexOf(',', prev.offset + prev.length);
    if (c !== -1 && c < start) out = out.slice(0, c) + out.slice(c + 1);
  }
  return out;
}

/** Sets (or with `undefined`, removes) `servers[name]` where `path` leads to the servers object. */
export function setJsoncEntry(text: string, path: readonly string[], name: string, value: unknown): string {
  const bom = text.charCodeAt(0) === 0xfeff ? '\ufeff' : '';
  let body = text.slice(bom.length);
  if (body.trim() === '') body = '{}\n';
  if (value === undefined) return bom + removeProperty(body, path, name);
  const options = formattingOf(body);
  for (const e of modify(body, [...path, name], value, {}).sort((a, b) => b.offset - a.offset)) {
    body = body.slice(0, e.offset) + e.content + body.slice(e.offset + e.length);
    if (e.content) body = applyEdits(body, format(body, { offset: e.offset, length: e.content.length }, options));
  }
  return bom + body;
}
