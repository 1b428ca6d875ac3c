// The lines of a textarea editor, as the YAML editor and the code panel
// both show them: a gutter of line numbers with the lines an error names
// marked, and going to a line.

// numberLines fills gutter with a number for each line of text, marking
// those in marked (a Set of 1-based line numbers).
export function numberLines(gutter, text, marked) {
  const n = text.split('\n').length;
  const nums = document.createDocumentFragment();
  for (let i = 1; i <= n; i++) {
    const s = document.createElement('span');
    s.textContent = `${i}\n`;
    if (marked.has(i)) s.className = 'bad';
    nums.append(s);
  }
  gutter.replaceChildren(nums);
}

// goLine selects line n (1-based) of area and brings it into view, a few
// lines from the top: selecting does not scroll a textarea. What scrolls
// with the area (its gutter) is the caller's to follow.
export function goLine(area, n) {
  const lines = area.value.split('\n');
  let at = 0;
  for (let i = 0; i < n - 1 && i < lines.length; i++) at += lines[i].length + 1;
  area.focus();
  area.setSelectionRange(at, at + (lines[n - 1] ?? '').length);
  const lh = parseFloat(getComputedStyle(area).lineHeight) || 18;
  area.scrollTop = Math.max(0, (n - 4) * lh);
}
