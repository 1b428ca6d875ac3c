// The operator's log, live: structured lines, follow or pause, filter by
// text and level, trouble highlighted, the lines since T0 marked.

import { el, live, t } from './api.js';

const MAX_LINES = 3000;
const TROUBLE = /forbidden|exceeded quota/i;

// query, when set, is added to the stream's address (an instructor's
// view names the class: ?class=NAME).
export function logPanel(sessionID, query = '') {
  const list = document.getElementById('log');
  const follow = document.getElementById('log-follow');
  const filter = document.getElementById('log-filter');
  const level = document.getElementById('log-level');
  const status = document.getElementById('log-status');
  let following = true;
  let t0 = 0;
  let unseen = 0;

  const visible = (li) => {
    const q = filter.value.trim().toLowerCase();
    const lv = level.value;
    if (lv && li.dataset.level !== lv) return false;
    return !q || li.textContent.toLowerCase().includes(q);
  };
  const refilter = () => { for (const li of list.children) li.hidden = !visible(li); };
  const mark = () => {
    for (const li of list.children) li.classList.toggle('after-t0', t0 > 0 && Number(li.dataset.time) >= t0);
  };
  const scroll = () => { if (following) list.scrollTop = list.scrollHeight; };

  follow.addEventListener('click', () => {
    following = !following;
    follow.setAttribute('aria-pressed', String(following));
    follow.textContent = following ? t('log.following') : t('log.paused');
    if (following) { unseen = 0; status.textContent = ''; scroll(); }
  });
  filter.addEventListener('input', refilter);
  level.addEventListener('change', refilter);

  const add = (frame) => {
    if (frame.skipped) {
      list.append(el('li', { class: 'skipped' }, t('log.skipped', { n: frame.skipped })));
    }
    if (frame.type === 'gap' || !frame.data) return;
    const d = frame.data ?? {};
    const line = typeof d === 'string' ? { message: d } : d;
    const when = line.time ? new Date(line.time) : null;
    const lv = (line.level || 'info').toLowerCase();
    const li = el('li', { 'data-level': lv === 'error' ? 'error' : 'info', 'data-time': when ? when.getTime() : 0 },
      el('time', {}, when ? when.toLocaleTimeString() : ''), ' ',
      el('span', { class: `level level-${lv}` }, lv), ' ',
      line.object ? el('span', { class: 'object' }, line.object) : null, ' ',
      el('span', { class: 'msg' }, line.message || line.raw || ''),
      line.error ? el('span', { class: 'err' }, ` ${line.error}`) : null);
    if (TROUBLE.test(li.textContent) || lv === 'error') li.classList.add('trouble');
    if (t0 > 0 && when && when.getTime() >= t0) li.classList.add('after-t0');
    li.hidden = !visible(li);
    list.append(li);
    while (list.children.length > MAX_LINES) list.firstElementChild.remove();
    if (following) scroll();
    else { unseen++; status.textContent = t('log.unseen', { n: unseen }); }
  };

  const conn = live(`/api/sessions/${encodeURIComponent(sessionID)}/streams/log${query}`, add,
    (s) => { if (s === 'closed') status.textContent = t('log.reconnecting'); else if (!unseen) status.textContent = ''; },
    () => { list.replaceChildren(); unseen = 0; });
  return {
    setT0(ms) { if (ms !== t0) { t0 = ms; mark(); } },
    close() { conn.close(); },
  };
}
