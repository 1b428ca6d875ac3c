// The operator's log, live. A reconcile pass (a line with a "pass", see
// internal/oplog/pass.go) is drawn as the course draws the loop: Watch →
// Diff → Act → status, with the time it took and when it runs next; a pass
// with nothing to do is one dim line. Any line opens (click, Enter or
// Space) to show all its fields. Filters: text, level, object, what was
// done (a kind such as promoted or fenced, or words of an act), idle
// passes hidden. jumpTo shows the pass a check saw. Follow or pause; the
// lines since T0 are marked.

import { el, live, t } from './api.js';

const MAX_LINES = 3000;
const TROUBLE = /forbidden|exceeded quota/i;

// ms shows whole milliseconds: 181 ms, 2.0 s.
function ms(v) {
  if (v < 1) return t('log.lessms');
  return v < 1000 ? `${v} ms` : `${(v / 1000).toFixed(1)} s`;
}

// query, when set, is added to the stream's address (an instructor's
// view names the class: ?class=NAME).
export function logPanel(sessionID, query = '') {
  const $ = (id) => document.getElementById(id);
  const list = $('log');
  const follow = $('log-follow');
  const filter = $('log-filter');
  const level = $('log-level');
  const object = $('log-object');
  const did = $('log-did');
  const kinds = $('log-kinds');
  const hideIdle = $('log-hide-idle');
  const status = $('log-status');
  let following = true;
  let t0 = 0;
  let unseen = 0;
  // The parsed line of each item, for its fields and the filters.
  const lines = new WeakMap();
  const objectsSeen = new Set();
  const kindsSeen = new Set();

  const didMatches = (p) => {
    const q = did.value.trim().toLowerCase();
    if (!q) return true;
    if (!p) return false;
    return (p.kinds ?? []).some((k) => k.toLowerCase() === q) || (p.act ?? []).join('\n').toLowerCase().includes(q);
  };
  const visible = (li) => {
    const line = lines.get(li);
    if (!line) return !did.value.trim() && !object.value; // a "lines skipped" note
    const q = filter.value.trim().toLowerCase();
    if (level.value && li.dataset.level !== level.value) return false;
    if (object.value && line.object !== object.value) return false;
    if (hideIdle.checked && line.pass?.idle) return false;
    if (!didMatches(line.pass)) return false;
    return !q || li.textContent.toLowerCase().includes(q);
  };
  const refilter = () => { for (const li of list.children) li.hidden = !visible(li); };
  const mark = () => {
    for (const li of list.children) li.classList.toggle('after-t0', t0 > 0 && Number(li.dataset.time) >= t0);
  };
  const scroll = () => { if (following) list.scrollTop = list.scrollHeight; };
  const setFollowing = (on) => {
    following = on;
    follow.setAttribute('aria-pressed', String(following));
    follow.textContent = following ? t('log.following') : t('log.paused');
    if (following) { unseen = 0; status.textContent = ''; scroll(); }
  };

  follow.addEventListener('click', () => setFollowing(!following));
  for (const c of [filter, did]) c.addEventListener('input', refilter);
  for (const c of [level, object, hideIdle]) c.addEventListener('change', refilter);

  // seen offers the line's object and the pass's kinds to the filters.
  const seen = (line) => {
    if (line.object && !objectsSeen.has(line.object)) {
      objectsSeen.add(line.object);
      object.append(el('option', { value: line.object }, line.object));
    }
    for (const k of line.pass?.kinds ?? []) {
      if (kindsSeen.has(k)) continue;
      kindsSeen.add(k);
      kinds.append(el('option', { value: k }));
    }
  };

  const add = (frame) => {
    if (frame.skipped) {
      list.append(el('li', { class: 'skipped' }, t('log.skipped', { n: frame.skipped })));
    }
    if (frame.type === 'gap' || !frame.data) return;
    const d = frame.data ?? {};
    const line = typeof d === 'string' ? { message: d } : d;
    const li = item(line);
    // Its place in the log, the same on every server: the line's mark.
    if (frame.cursor) li.dataset.cursor = frame.cursor;
    lines.set(li, line);
    seen(line);
    if (TROUBLE.test(li.textContent) || li.dataset.level === 'error') li.classList.add('trouble');
    if (t0 > 0 && Number(li.dataset.time) >= t0) li.classList.add('after-t0');
    li.hidden = !visible(li);
    list.append(li);
    while (list.children.length > MAX_LINES) list.firstElementChild.remove();
    if (following) scroll();
    else { unseen++; status.textContent = t('log.unseen', { n: unseen }); }
  };

  const toggle = (li) => {
    const line = lines.get(li);
    if (!line) return;
    const open = li.getAttribute('aria-expanded') !== 'true';
    li.setAttribute('aria-expanded', String(open));
    if (open && !li.querySelector('.detail')) li.append(detail(line));
  };
  list.addEventListener('click', (e) => {
    const li = e.target.closest('#log > li');
    // A click in the open fields selects text; it does not close them.
    if (!li || e.target.closest('.detail') || String(window.getSelection?.() ?? '')) return;
    toggle(li);
  });
  list.addEventListener('keydown', (e) => {
    if ((e.key === 'Enter' || e.key === ' ') && e.target.parentElement === list) {
      e.preventDefault();
      toggle(e.target);
    }
  });

  const conn = live(`/api/sessions/${encodeURIComponent(sessionID)}/streams/log${query}`, add,
    (s) => { if (s === 'closed') status.textContent = t('log.reconnecting'); else if (!unseen) status.textContent = ''; },
    () => { list.replaceChildren(); unseen = 0; });
  return {
    setT0(v) { if (v !== t0) { t0 = v; mark(); } },
    // jumpTo scrolls to the last pass (of object, when given) at or before
    // timeMs, opens and highlights it, and pauses following so it stays in
    // view; filters that hide it are cleared. It returns the pass's item,
    // or null when the log has none.
    jumpTo(timeMs, obj = '') {
      let found = null;
      for (let li = list.lastElementChild; li && !found; li = li.previousElementSibling) {
        const line = lines.get(li);
        if (line?.pass && Number(li.dataset.time) <= timeMs && (!obj || line.object === obj)) found = li;
      }
      if (!found) { status.textContent = t('log.nopass'); return null; }
      if (found.hidden) {
        filter.value = ''; did.value = ''; level.value = ''; object.value = ''; hideIdle.checked = false;
        refilter();
      }
      setFollowing(false);
      for (const li of list.querySelectorAll('li.jumped')) li.classList.remove('jumped');
      found.classList.add('jumped');
      if (found.getAttribute('aria-expanded') !== 'true') toggle(found);
      found.scrollIntoView({ block: 'center' });
      found.focus({ preventScroll: true });
      return found;
    },
    close() { conn.close(); },
  };
}

// item draws one line: a pass as its loop, any other line as before.
function item(line) {
  const when = line.time ? new Date(line.time) : null;
  const lv = (line.level || 'info').toLowerCase();
  const p = line.pass;
  const li = el('li', {
    class: p ? (p.idle ? 'reconcile idle' : 'reconcile') : null, tabindex: '0', 'aria-expanded': 'false',
    'data-level': lv === 'error' ? 'error' : 'info', 'data-time': when ? when.getTime() : 0,
    'data-object': line.object || null, 'data-kinds': p?.kinds?.join(' ') || null,
  }, el('div', { class: 'head' },
    el('time', {}, when ? when.toLocaleTimeString() : ''), ' ',
    el('span', { class: `level level-${lv}` }, lv), ' ',
    line.object ? el('span', { class: 'object' }, line.object) : null, ' ',
    el('span', { class: 'msg' }, line.message || line.raw || ''),
    line.error ? el('span', { class: 'err' }, ` ${line.error}`) : null,
    p?.idle ? el('span', { class: 'badge' }, t('log.idle')) : null,
    p ? el('span', { class: 'timing' }, timing(p)) : null));
  if (p && !p.idle) li.append(loop(p));
  return li;
}

function timing(p) {
  const next = p.nextMs ? t('log.next', { d: ms(p.nextMs) }) : t('log.onchange');
  return `${t('log.took', { d: ms(p.tookMs ?? 0) })} · ${next}`;
}

function statusText(p) {
  const parts = [p.status ? t('log.wrote', { status: p.status }) : t('log.unchanged')];
  if (p.primary) parts.push(t('log.primary', { name: p.primary }));
  return parts.join(' · ');
}

// loop draws a pass's Watch → Diff → Act → status.
function loop(p) {
  const stage = (cls, name, text, empty) => el('div', { class: `stage ${cls}${text ? '' : ' none'}` },
    el('span', { class: 'step' }, name), el('span', { class: 'text' }, text || empty));
  // Divs, not a list: '#log li' counts the log's lines.
  return el('div', { class: 'loop' },
    stage('watch', t('log.watch'), (p.watch ?? []).join('; '), '–'),
    stage('diff', t('log.diff'), (p.diff ?? []).join('; '), t('log.nodiff')),
    stage('act', t('log.act'), (p.act ?? []).join('; '), t('log.noact')),
    stage('status', t('log.status'), statusText(p), ''));
}

// detail shows every field of a line: the pass's parts one item a line,
// its timing, the line's other fields, and the line as written.
function detail(line) {
  const dl = el('dl', { class: 'detail' });
  const row = (k, ...v) => dl.append(el('dt', {}, k), el('dd', {}, ...v));
  const p = line.pass;
  if (p) {
    for (const [k, name] of [['watch', 'log.watch'], ['diff', 'log.diff'], ['act', 'log.act']]) {
      if (p[k]?.length) row(t(name), ...p[k].map((x) => el('div', {}, x)));
    }
    row(t('log.status'), statusText(p));
    row('took', ms(p.tookMs ?? 0));
    row('next', p.nextMs ? ms(p.nextMs) : t('log.onchange'));
    if (p.kinds?.length) row('kinds', p.kinds.join(', '));
  }
  if (line.time) row('time', line.time);
  if (line.level) row('level', line.level);
  if (line.object) row('object', line.object);
  for (const [k, v] of Object.entries(line.fields ?? {}).sort()) row(k, v);
  if (line.error) row('error', line.error);
  row('raw', el('code', {}, line.raw ?? line.message ?? ''));
  return dl;
}
