// An instructor's read-only view of a member's session: its status and
// timeline, and the live log and cluster panels its learner sees.

import { call, el, t } from './api.js';
import { logPanel } from './log.js';
import { clusterPanel } from './cluster.js';
import { tabs } from './tabs.js';

const main = document.getElementById('learner');
const cls = main.dataset.class;
const id = main.dataset.session;
const base = `/api/classes/${encodeURIComponent(cls)}/sessions/${encodeURIComponent(id)}`;
const list = document.getElementById('timeline');
const note = document.getElementById('learner-note');
let after = 0;
// pageSize is the events asked for at once (the server's most, see
// docs/api.md): a full page may have more after it.
const pageSize = 500;

const poll = async () => {
  try {
    const st = await call('GET', base);
    document.getElementById('learner-state').textContent = t(`state.${st.state}`);
    document.getElementById('learner-exercise').textContent = st.exerciseId || '–';
    const seen = after;
    for (;;) {
      const evs = await call('GET', `${base}/timeline?after=${after}&limit=${pageSize}`);
      for (const ev of evs) {
        after = Math.max(after, ev.seq);
        list.append(el('li', { class: `ev ev-${ev.kind}`, 'data-kind': ev.kind },
          el('time', {}, new Date(ev.at).toLocaleTimeString()), ' ',
          el('span', { class: 'kind' }, ev.kind), ' ', ev.exercise ? el('code', {}, ev.exercise) : null, ' ', ev.message));
      }
      if (evs.length < pageSize) break;
    }
    // New events: the replay (debrief.js) loads again.
    if (after > seen && seen > 0) document.dispatchEvent(new CustomEvent('oplab:timeline'));
  } catch (e) { note.textContent = e.message; }
};

for (const act of ['reset', 'end']) {
  document.getElementById(`learner-${act}`).addEventListener('click', async (e) => {
    if (act === 'end' && !window.confirm(t('board.confirmend'))) return;
    e.target.disabled = true;
    note.textContent = t('board.working');
    try { await call('POST', `${base}/${act}`); note.textContent = t('board.done'); } catch (err) { note.textContent = err.message; }
    e.target.disabled = false;
    poll();
  });
}

poll();
setInterval(poll, 2000);
if (main.dataset.streams === 'true') {
  const q = `?class=${encodeURIComponent(cls)}`;
  tabs(document.querySelector('.tabs'));
  logPanel(id, q);
  clusterPanel(id, null, q);
}
