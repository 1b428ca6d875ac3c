// The YAML editor: write or load a manifest, dry-run it on the server with
// errors pointing at their line, then apply.

import { call, stream, t } from './api.js';

export function editorPanel(sessionID) {
  const base = `/api/sessions/${encodeURIComponent(sessionID)}`;
  const area = document.getElementById('editor');
  const gutter = document.getElementById('editor-lines');
  const out = document.getElementById('editor-out');
  const dry = document.getElementById('editor-dryrun');
  const apply = document.getElementById('editor-apply');
  let bad = 0;

  const numbers = () => {
    const n = area.value.split('\n').length;
    gutter.textContent = '';
    for (let i = 1; i <= n; i++) {
      const s = document.createElement('span');
      s.textContent = `${i}\n`;
      if (i === bad) s.className = 'bad';
      gutter.append(s);
    }
    gutter.scrollTop = area.scrollTop;
  };
  area.addEventListener('input', () => { bad = 0; numbers(); });
  area.addEventListener('scroll', () => { gutter.scrollTop = area.scrollTop; });

  // goLine puts the caret at the start of line n.
  const goLine = (n) => {
    const lines = area.value.split('\n');
    let at = 0;
    for (let i = 0; i < n - 1 && i < lines.length; i++) at += lines[i].length + 1;
    area.focus();
    area.setSelectionRange(at, at + (lines[n - 1] ?? '').length);
    // Selecting does not scroll a textarea: bring the line into view, a
    // few lines from the top.
    const lh = parseFloat(getComputedStyle(area).lineHeight) || 18;
    area.scrollTop = Math.max(0, (n - 4) * lh);
    gutter.scrollTop = area.scrollTop;
  };

  const submit = async (dryRun) => {
    out.className = 'editor-out';
    out.textContent = t(dryRun ? 'editor.checking' : 'editor.applying');
    try {
      const r = await call('POST', `${base}/apply`, { yaml: area.value, dryRun });
      const msg = [r.output, r.error].filter(Boolean).join('\n').trim();
      out.textContent = msg || (r.ok ? t('editor.ok') : '');
      out.classList.add(r.ok ? 'ok' : 'error');
      bad = r.ok ? 0 : (r.line || 0);
      numbers();
      if (bad) goLine(bad);
    } catch (e) {
      out.textContent = e.message;
      out.classList.add('error');
    }
  };
  dry.addEventListener('click', () => submit(true));
  apply.addEventListener('click', () => submit(false));
  numbers();

  return {
    // load fetches an object's YAML from the cluster into the editor.
    async load(kind, name) {
      let yaml = '';
      out.textContent = t('editor.loading', { name });
      try {
        await stream(`${base}/console`, { line: `kubectl get ${kind} ${name} -o yaml` }, (c) => { yaml += c; });
        area.value = yaml;
        out.textContent = '';
      } catch (e) { out.textContent = e.message; }
      bad = 0;
      numbers();
      area.focus();
    },
  };
}
