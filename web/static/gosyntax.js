// Go's syntax in colour for the code panel. Written by hand: no small,
// well-kept Go highlighter works without a bundler or a dependency of its
// own, and this needs only a few kinds of token. It knows comments,
// strings (interpreted, raw and runes), numbers, keywords and the
// predeclared identifiers (types, functions, constants), and nothing
// else: whatever lies between is plain text.

const words = (s) => new Set(s.split(' '));
const keywords = words('break case chan const continue default defer else fallthrough for func go goto if import ' +
  'interface map package range return select struct switch type var');
const types = words('any bool byte comparable complex64 complex128 error float32 float64 int int8 int16 int32 int64 ' +
  'rune string uint uint8 uint16 uint32 uint64 uintptr');
const builtins = words('append cap clear close complex copy delete imag len make max min new panic print println ' +
  'real recover true false iota nil');

// One alternative per kind, in the order Go's scanner decides: a comment,
// a string (an unterminated one ends at its line, a raw one at the end),
// an identifier (so that digits inside it are not a number), a number.
const token = new RegExp([
  String.raw`(\/\/[^\n]*|\/\*[\s\S]*?(?:\*\/|$))`,
  String.raw`("(?:[^"\\\n]|\\.)*"?|` + '`[^`]*`?' + String.raw`|'(?:[^'\\\n]|\\.)*'?)`,
  String.raw`([\p{L}_][\p{L}\p{Nd}_]*)`,
  String.raw`((?:0[xX][\da-fA-F_]*(?:\.[\da-fA-F_]*)?(?:[pP][+-]?[\d_]+)?|0[bBoO][\d_]+|(?:\d[\d_]*(?:\.[\d_]*)?|\.\d[\d_]*)(?:[eE][+-]?[\d_]+)?)i?)`,
].join('|'), 'gu');

// tokens splits src into [class, text] pairs, class '' for plain text.
export function tokens(src) {
  const out = [];
  let at = 0;
  for (const m of src.matchAll(token)) {
    if (m.index > at) out.push(['', src.slice(at, m.index)]);
    let cls = '';
    if (m[1] !== undefined) cls = 'com';
    else if (m[2] !== undefined) cls = 'str';
    else if (m[4] !== undefined) cls = 'num';
    else if (keywords.has(m[3])) cls = 'kw';
    // After a dot, a name is a field or method, whatever it is called.
    else if (src[m.index - 1] !== '.') cls = types.has(m[3]) ? 'type' : builtins.has(m[3]) ? 'builtin' : '';
    out.push([cls, m[0]]);
    at = m.index + m[0].length;
  }
  if (at < src.length) out.push(['', src.slice(at)]);
  return out;
}

const escapes = { '&': '&amp;', '<': '&lt;', '>': '&gt;' };
const escape = (s) => s.replace(/[&<>]/g, (c) => escapes[c]);

// highlight returns src as HTML: a block per line (a line in marked, a
// Set of 1-based numbers, of class "bad"), its tokens in spans of their
// class. A token over several lines (a comment, a raw string) is cut at
// each line's end.
export function highlight(src, marked = new Set()) {
  const lines = [''];
  for (const [cls, text] of tokens(src)) {
    text.split('\n').forEach((part, i) => {
      if (i > 0) lines.push('');
      if (part) lines[lines.length - 1] += cls ? `<span class="${cls}">${escape(part)}</span>` : escape(part);
    });
  }
  // An empty line is a space, so that its block is a line high.
  return lines.map((h, i) => `<span class="${marked.has(i + 1) ? 'ln bad' : 'ln'}">${h || ' '}</span>`).join('');
}
