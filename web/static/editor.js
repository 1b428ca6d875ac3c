// The YAML editor: write or load a manifest, dry-run it on the server with
// errors pointing at their line, then apply.

import { call, stream, t } from './api.js';
import { goLine, numberLines } from './lines.js';

export function editorPanel(sessionID) {
  const base = `/api/sessions/${encodeURIComponent(sessionID)}`;
  const area = document.getElementById('editor');
  const gutter = document.getElementById('editor-lines');
  const out = document.getElementById('editor-out');
  const dry = document.getElementById('editor-dryrun');
  const apply = document.getElementById('editor-apply');
  let bad = 0;

  const numbers = () => {
    numberLines(gutter, area.value, new Set([bad]));
    gutter.scrollTop = area.scrollTop;
  };
  area.addEventListener('input', () => { bad = 0; numbers(); });
  area.addEventListener('scroll', () => { gutter.scrollTop = area.scrollTop; });

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
      if (bad) {
        goLine(area, bad);
        gutter.scrollTop = area.scrollTop;
      }
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
