// The code panel of a lab whose learner writes the controller: the
// module's files, edited in place, built in the learner's sandbox, with the
// compiler's messages on their lines as the YAML editor marks the API
// server's.

import { call, duration, t } from './api.js';

export function codePanel(sessionID) {
  const base = `/api/sessions/${encodeURIComponent(sessionID)}`;
  const area = document.getElementById('code');
  const gutter = document.getElementById('code-lines');
  const pick = document.getElementById('code-file');
  const out = document.getElementById('code-out');
  const errs = document.getElementById('code-errors');
  const buildBtn = document.getElementById('code-build');
  const runBtn = document.getElementById('code-run');
  let files = {};
  let current = '';
  let bad = {}; // file → lines the compiler named

  const numbers = () => {
    const marked = new Set(bad[current] || []);
    const n = area.value.split('\n').length;
    gutter.textContent = '';
    for (let i = 1; i <= n; i++) {
      const s = document.createElement('span');
      s.textContent = `${i}\n`;
      if (marked.has(i)) s.className = 'bad';
      gutter.append(s);
    }
    gutter.scrollTop = area.scrollTop;
  };
  // show puts file name in the editor, keeping the edits of the one left.
  const show = (name) => {
    if (current) files[current] = area.value;
    current = name;
    pick.value = name;
    area.value = files[name] ?? '';
    numbers();
  };
  const goLine = (name, n) => {
    show(name);
    const lines = area.value.split('\n');
    let at = 0;
    for (let i = 0; i < n - 1 && i < lines.length; i++) at += lines[i].length + 1;
    area.focus();
    area.setSelectionRange(at, at + (lines[n - 1] ?? '').length);
    const lh = parseFloat(getComputedStyle(area).lineHeight) || 18;
    area.scrollTop = Math.max(0, (n - 4) * lh);
    gutter.scrollTop = area.scrollTop;
  };
  area.addEventListener('input', () => { delete bad[current]; numbers(); });
  area.addEventListener('scroll', () => { gutter.scrollTop = area.scrollTop; });
  // A tab in Go code is a tab, not a move to the next control; Esc then
  // Tab leaves the editor.
  let escaped = false;
  area.addEventListener('keydown', (e) => {
    if (e.key === 'Escape') { escaped = true; return; }
    if (e.key === 'Tab' && !e.shiftKey && !escaped) {
      e.preventDefault();
      area.setRangeText('\t', area.selectionStart, area.selectionEnd, 'end');
      numbers();
    }
    escaped = false;
  });
  pick.addEventListener('change', () => show(pick.value));

  const load = async () => {
    out.textContent = t('code.loading');
    try {
      const r = await call('GET', `${base}/module`);
      files = r.files || {};
      // go.mod and go.sum are the toolchain's: a build puts them back.
      const names = Object.keys(files).filter((n) => n.endsWith('.go')).sort();
      pick.textContent = '';
      for (const n of names) {
        const o = document.createElement('option');
        o.value = n;
        o.textContent = n;
        pick.append(o);
      }
      current = '';
      show(names.find((n) => n.startsWith('internal/controller/')) || names[0] || '');
      out.textContent = '';
    } catch (e) {
      out.textContent = e.message;
      out.className = 'editor-out error';
    }
  };

  const build = async (run) => {
    files[current] = area.value;
    buildBtn.disabled = runBtn.disabled = true;
    out.className = 'editor-out';
    out.textContent = t('code.building');
    errs.hidden = true;
    errs.textContent = '';
    try {
      const r = await call('POST', `${base}/build`, { files, run });
      const d = duration(r.tookMs || 0);
      bad = {};
      if (!r.ok) {
        for (const e of r.errors || []) {
          (bad[e.file] ||= []).push(e.line);
          const li = document.createElement('li');
          const a = document.createElement('button');
          a.type = 'button';
          a.className = 'linklike';
          a.dataset.file = e.file;
          a.dataset.line = String(e.line);
          a.textContent = `${e.file}:${e.line}${e.column ? `:${e.column}` : ''}`;
          a.addEventListener('click', () => goLine(e.file, e.line));
          li.append(a, ` ${e.msg}`);
          errs.append(li);
        }
        errs.hidden = !(r.errors || []).length;
        out.textContent = (r.errors || []).length ? t('code.failed', { n: r.errors.length, d }) : r.output;
        out.classList.add('error');
        const first = (r.errors || [])[0];
        if (first) goLine(first.file, first.line);
        else numbers();
      } else if (r.error) {
        out.textContent = t('code.notstarted', { d, err: r.error });
        out.classList.add('error');
        numbers();
      } else {
        out.textContent = t(r.ran ? 'code.ran' : 'code.built', { d });
        out.classList.add('ok');
        numbers();
      }
    } catch (e) {
      out.textContent = e.message;
      out.classList.add('error');
    } finally {
      buildBtn.disabled = runBtn.disabled = false;
    }
  };
  buildBtn.addEventListener('click', () => build(false));
  runBtn.addEventListener('click', () => build(true));
  load();
}
