// The console: one kubectl line at a time against the learner's own
// cluster; output streams; -w runs until stopped; history with ↑/↓;
// completion with Tab.

import { el, stream, call, t, APIError } from './api.js';

const ERR_MARK = '\n\u0000error: ';

export function consolePanel(sessionID) {
  const base = `/api/sessions/${encodeURIComponent(sessionID)}`;
  const out = document.getElementById('console-out');
  const form = document.getElementById('console-form');
  const input = document.getElementById('console-in');
  const stop = document.getElementById('console-stop');
  const comps = document.getElementById('console-completions');
  const histKey = `oplab.history.${sessionID}`;
  let history = JSON.parse(localStorage.getItem(histKey) || '[]');
  let pos = history.length;
  let running = null;

  const write = (s, cls) => {
    out.append(cls ? el('span', { class: cls }, s) : document.createTextNode(s));
    out.scrollTop = out.scrollHeight;
  };

  const run = async (line) => {
    line = line.trim();
    if (!line || running) return;
    if (history[history.length - 1] !== line) history.push(line);
    history = history.slice(-200);
    localStorage.setItem(histKey, JSON.stringify(history));
    pos = history.length;
    write(`$ ${line}\n`, 'cmd');
    running = new AbortController();
    stop.hidden = false;
    input.disabled = true;
    let pending = '';
    try {
      await stream(`${base}/console`, { line }, (chunk) => {
        pending += chunk;
        const i = pending.indexOf(ERR_MARK);
        if (i >= 0) {
          write(pending.slice(0, i));
          write(pending.slice(i + ERR_MARK.length), 'error');
          pending = '';
          return;
        }
        // Keep back a partial marker.
        const keep = pending.lastIndexOf('\n');
        if (keep >= 0 && pending.length - keep < ERR_MARK.length && ERR_MARK.startsWith(pending.slice(keep))) {
          write(pending.slice(0, keep));
          pending = pending.slice(keep);
        } else { write(pending); pending = ''; }
      }, running.signal);
      if (pending) write(pending);
    } catch (e) {
      if (e.name === 'AbortError') write(`${t('console.stopped')}\n`, 'note');
      else write(`${e instanceof APIError ? e.message : String(e)}\n`, 'error');
    } finally {
      running = null;
      stop.hidden = true;
      input.disabled = false;
      input.focus();
    }
  };

  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const line = input.value;
    input.value = '';
    comps.hidden = true;
    run(line);
  });
  stop.addEventListener('click', () => running?.abort());
  input.addEventListener('keydown', async (e) => {
    if (e.key === 'ArrowUp' && pos > 0) { e.preventDefault(); input.value = history[--pos]; }
    else if (e.key === 'ArrowDown') {
      e.preventDefault();
      pos = Math.min(pos + 1, history.length);
      input.value = history[pos] ?? '';
    } else if (e.key === 'Tab' && input.value.trim()) {
      e.preventDefault();
      let comp;
      try { comp = await call('GET', `${base}/complete?line=${encodeURIComponent(input.value)}`); } catch { return; }
      const list = comp.candidates ?? [];
      const head = input.value.slice(0, comp.from);
      if (list.length === 1) {
        input.value = `${head}${list[0]} `;
        comps.hidden = true;
      } else {
        // Complete as far as every candidate agrees, and show them.
        let common = list[0] ?? '';
        for (const w of list) while (!w.startsWith(common)) common = common.slice(0, -1);
        if (common.length > input.value.length - comp.from) input.value = head + common;
        comps.replaceChildren(...list.slice(0, 40).map((w) => el('li', {}, w)));
        comps.hidden = list.length === 0;
      }
    } else if (e.key === 'Escape') { running?.abort(); comps.hidden = true; }
  });
  document.addEventListener('keydown', (e) => {
    if (e.key === 'c' && e.ctrlKey && running) { e.preventDefault(); running.abort(); }
  });

  return {
    // put places a command in the input, ready to run.
    put(cmd) { input.value = cmd; input.focus(); },
    run,
  };
}
