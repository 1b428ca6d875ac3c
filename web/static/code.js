// The code panel of a lab whose learner writes the controller: the
// module's files, edited in place with Go's syntax in colour, formatted
// as gofmt does on demand, built in the learner's sandbox, with the
// compiler's messages on their lines as the YAML editor marks the API
// server's.

import { call, duration, t } from './api.js';
import { highlight } from './gosyntax.js';
import { goLine, numberLines } from './lines.js';

export function codePanel(sessionID) {
  const base = `/api/sessions/${encodeURIComponent(sessionID)}`;
  const area = document.getElementById('code');
  // The colours are drawn in a <pre> behind the textarea, whose own text
  // is transparent: same font, padding and tabs, scrolled with it.
  const hl = document.getElementById('code-hl');
  const gutter = document.getElementById('code-lines');
  const pick = document.getElementById('code-file');
  const out = document.getElementById('code-out');
  const errs = document.getElementById('code-errors');
  const buildBtn = document.getElementById('code-build');
  const runBtn = document.getElementById('code-run');
  const formatBtn = document.getElementById('code-format');
  let files = {};
  let current = '';
  let bad = {}; // file → lines the compiler or gofmt named

  const follow = () => {
    gutter.scrollTop = hl.scrollTop = area.scrollTop;
    hl.scrollLeft = area.scrollLeft;
  };
  const render = () => {
    const marked = new Set(bad[current] || []);
    numberLines(gutter, area.value, marked);
    hl.firstElementChild.innerHTML = highlight(area.value, marked);
    follow();
  };
  // While typing, the colours are drawn once a frame, however many keys.
  let frame = 0;
  const renderSoon = () => {
    if (!frame) frame = requestAnimationFrame(() => { frame = 0; render(); });
  };
  // show puts file name in the editor, keeping the edits of the one left.
  const show = (name) => {
    if (current) files[current] = area.value;
    current = name;
    pick.value = name;
    area.value = files[name] ?? '';
    render();
  };
  const go = (name, n) => {
    show(name);
    goLine(area, n);
    follow();
  };
  area.addEventListener('input', () => { delete bad[current]; renderSoon(); });
  area.addEventListener('scroll', follow);
  // A tab in Go code is a tab, not a move to the next control; Esc then
  // Tab leaves the editor.
  let escaped = false;
  area.addEventListener('keydown', (e) => {
    if (e.key === 'Escape') { escaped = true; return; }
    if (e.key === 'Tab' && !e.shiftKey && !escaped) {
      e.preventDefault();
      area.setRangeText('\t', area.selectionStart, area.selectionEnd, 'end');
      renderSoon();
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

  // begin clears what the last request showed.
  const begin = (msg) => {
    out.className = 'editor-out';
    out.textContent = msg;
    errs.hidden = true;
    errs.textContent = '';
  };
  // listErrors lists errors (file, line, column, msg), each a way to its
  // line, marks their lines and goes to the first.
  const listErrors = (errors) => {
    bad = {};
    for (const e of errors) {
      (bad[e.file] ||= []).push(e.line);
      const li = document.createElement('li');
      const a = document.createElement('button');
      a.type = 'button';
      a.className = 'linklike';
      a.dataset.file = e.file;
      a.dataset.line = String(e.line);
      a.textContent = `${e.file}:${e.line}${e.column ? `:${e.column}` : ''}`;
      a.addEventListener('click', () => go(e.file, e.line));
      li.append(a, ` ${e.msg}`);
      errs.append(li);
    }
    errs.hidden = !errors.length;
    if (errors.length) go(errors[0].file, errors[0].line);
    else render();
  };

  const build = async (run) => {
    files[current] = area.value;
    buildBtn.disabled = runBtn.disabled = true;
    begin(t('code.building'));
    try {
      const r = await call('POST', `${base}/build`, { files, run });
      const d = duration(r.tookMs || 0);
      const errors = r.ok ? [] : (r.errors || []);
      listErrors(errors);
      if (!r.ok) {
        out.textContent = errors.length ? t('code.failed', { n: errors.length, d }) : r.output;
        out.classList.add('error');
      } else if (r.error) {
        out.textContent = t('code.notstarted', { d, err: r.error });
        out.classList.add('error');
      } else {
        out.textContent = t(r.ran ? 'code.ran' : 'code.built', { d });
        out.classList.add('ok');
      }
    } catch (e) {
      out.textContent = e.message;
      out.classList.add('error');
    } finally {
      buildBtn.disabled = runBtn.disabled = false;
    }
  };

  // format puts the open file through gofmt on the server; the edit is
  // one the learner can undo, and the caret stays on its line.
  const format = async () => {
    const name = current;
    const src = area.value;
    formatBtn.disabled = true;
    begin(t('code.formatting'));
    try {
      const r = await call('POST', `${base}/format`, { files: { [name]: src } });
      if (!r.ok) {
        listErrors(r.errors || []);
        out.textContent = t('code.unparsed', { n: (r.errors || []).length });
        out.classList.add('error');
        return;
      }
      const got = r.files?.[name] ?? src;
      if ((name === current ? area.value : files[name]) !== src) {
        out.textContent = t('code.changed');
        return;
      }
      delete bad[name];
      if (name !== current) files[name] = got;
      else if (got !== src) replace(got);
      render();
      out.textContent = t(got === src ? 'code.unchanged' : 'code.formatted');
      out.classList.add('ok');
    } catch (e) {
      out.textContent = e.message;
      out.classList.add('error');
    } finally {
      formatBtn.disabled = false;
    }
  };
  const replace = (text) => {
    const line = area.value.slice(0, area.selectionStart).split('\n').length;
    const top = area.scrollTop;
    area.focus();
    area.select();
    if (!document.execCommand('insertText', false, text)) area.value = text;
    const lines = text.split('\n').slice(0, line - 1);
    const at = lines.reduce((n, l) => n + l.length + 1, 0);
    area.setSelectionRange(at, at);
    area.scrollTop = top;
  };

  buildBtn.addEventListener('click', () => build(false));
  runBtn.addEventListener('click', () => build(true));
  formatBtn.addEventListener('click', format);
  load();
}
