// The instructor's board: a row per member, a column per exercise, drawn
// from the board's JSON and fetched again whenever one of the class's
// sessions records an event.

import { call, duration, el, live, t } from './api.js';

const main = document.getElementById('board');
const name = main.dataset.class;
const base = `/api/classes/${encodeURIComponent(name)}`;
const head = document.getElementById('grid-head');
const body = document.getElementById('grid-body');
const note = document.getElementById('board-note');
const liveNote = document.getElementById('board-live');
const capacity = document.getElementById('capacity');

const mib = (b) => Math.round(b / 1048576);

// showCapacity says what the learners who wait for room see, and why.
let capacityTimer = null;
const showCapacity = (c) => {
  if (!c) { capacity.textContent = ''; return; }
  const parts = [
    t('board.cap.queue', { n: c.queue }),
    c.queue > 0 ? (c.estimateMs > 0 ? t('board.cap.estimate', { d: duration(c.estimateMs) }) : t('board.cap.noestimate')) : '',
    t('board.cap.live', { n: c.live, starting: c.starting }) + (c.maxClusters ? ` / ${c.maxClusters}` : ''),
    t(c.measuredClusters > 0 ? 'board.cap.cost' : 'board.cap.assumed', { mib: mib(c.clusterMemoryBytes), cpu: Math.round(c.clusterCpuCores * 100) }),
    t('board.cap.headroom', { mib: mib(c.memAvailableBytes), idle: c.idleCores.toFixed(1), cores: c.cores }),
  ];
  capacity.textContent = parts.filter(Boolean).join(' · ');
  capacity.classList.toggle('queued', c.queue > 0);
  // While learners wait, the numbers move without a class event.
  clearTimeout(capacityTimer);
  if (c.queue > 0) capacityTimer = setTimeout(() => refresh(), 5000);
};

const ago = (iso) => {
  if (!iso) return '–';
  return t('board.ago', { d: duration(Date.now() - new Date(iso).getTime()) });
};

const cell = (c, r) => {
  const parts = [];
  if (c.current && r.t0) {
    parts.push(el('span', { class: 'fault' }, t('board.faultfor', { d: duration(Date.now() - new Date(r.t0).getTime()) })), ' ');
  }
  if (c.total > 0) parts.push(el('span', { class: 'score' }, `${c.score}/${c.total}`));
  if (c.recoveryMs > 0) parts.push(' ', el('span', { class: 'ttr', title: t('board.ttr') }, duration(c.recoveryMs)));
  if (c.hints > 0) parts.push(' ', el('span', { class: 'hints' }, t('board.hintsn', { n: c.hints })));
  const cls = [c.passed ? 'ok' : (c.total > 0 ? 'failing' : ''), c.current ? 'current' : ''].filter(Boolean).join(' ');
  return el('td', { class: cls }, ...(parts.length ? parts : ['–']));
};

// actionsOf are what the instructor may do to the row's session now
// (reset, extend, end): the application decides, the board only offers
// them. can says whether act is one.
const actionsOf = (r) => (r.session ? r.actions ?? [] : []);
const can = (r, act) => actionsOf(r).includes(act);

// actionButton is the row's button for act, posted to the route of the
// same name.
const actionButton = (r, act) => el('button', { type: 'button', class: act === 'end' ? 'danger' : undefined,
  'data-act': act, 'data-session': r.session }, t(`board.${act}`));

// selected keeps the ticked learners' sessions across redraws.
const selected = new Set();

const row = (r) => el('tr', { 'data-learner': r.learner, 'data-session': r.session || '', class: r.stuck || r.trouble ? 'stuck' : '' },
  el('td', { class: 'select' }, can(r, 'extend')
    ? el('input', { type: 'checkbox', 'data-select': r.session, 'aria-label': t('board.select', { name: r.name }), checked: selected.has(r.session) })
    : ''),
  el('th', { scope: 'row' }, r.session
    ? el('a', { href: `/instructor/classes/${encodeURIComponent(name)}/sessions/${encodeURIComponent(r.session)}` }, r.name)
    : r.name),
  el('td', { class: 'state' }, r.state ? t(`state.${r.state}`) : t('board.notstarted')),
  el('td', { class: 'exercise' }, r.exercise || '–'),
  ...r.cells.map((c) => cell(c, r)),
  el('td', { class: 'passed-count' }, String(r.passed)),
  el('td', {}, String(r.hints)),
  el('td', {}, r.quizTotal > 0 ? `${r.quizScore}/${r.quizTotal}` : '–'),
  el('td', { class: 'activity' }, ago(r.lastActivity)),
  el('td', { class: 'stuck' }, r.trouble ? t(`board.trouble.${r.trouble}`) : r.stuck ? t(`board.stuck.${r.stuck}`) : ''),
  el('td', { class: 'actions' }, ...actionsOf(r).flatMap((act, i) => (i ? [' ', actionButton(r, act)] : [actionButton(r, act)]))));

const render = (b) => {
  head.replaceChildren(
    el('th', {}, ''), el('th', {}, t('board.learner')), el('th', {}, t('board.state')), el('th', {}, t('board.exercise')),
    ...b.columns.map((c) => el('th', { title: c.lab }, c.title || c.exercise)),
    el('th', {}, t('board.passed')), el('th', {}, t('board.hints')), el('th', {}, t('board.quiz')),
    el('th', {}, t('board.activity')), el('th', {}, t('board.stuck')), el('th', {}, ''));
  // A session that can no longer be extended (it ended) is no longer
  // selected: "Extend the selected" extends only the boxes shown ticked.
  const extendable = new Set(b.rows.filter((r) => can(r, 'extend')).map((r) => r.session));
  for (const id of selected) if (!extendable.has(id)) selected.delete(id);
  body.replaceChildren(...b.rows.map(row));
  showCapacity(b.capacity);
  if (!b.rows.length) body.append(el('tr', {}, el('td', { colspan: b.columns.length + 10 }, t('board.nomembers'))));
};

let fetching = null;
let again = false;
const refresh = async () => {
  if (fetching) { again = true; return; }
  fetching = call('GET', `${base}/board`).then(render).catch((e) => { note.textContent = e.message; });
  await fetching;
  fetching = null;
  if (again) { again = false; refresh(); }
};

// extendBody is the time to add, from the toolbar's minutes.
const extendBody = () => ({ byMs: Number(document.getElementById('extend-minutes').value) * 60000 });

body.addEventListener('change', (e) => {
  const box = e.target.closest('input[data-select]');
  if (!box) return;
  if (box.checked) selected.add(box.dataset.select); else selected.delete(box.dataset.select);
});

body.addEventListener('click', async (e) => {
  const b = e.target.closest('button[data-act]');
  if (!b) return;
  if (b.dataset.act === 'end' && !window.confirm(t('board.confirmend'))) return;
  b.disabled = true;
  note.textContent = t('board.working');
  try {
    await call('POST', `${base}/sessions/${encodeURIComponent(b.dataset.session)}/${b.dataset.act}`,
      b.dataset.act === 'extend' ? extendBody() : undefined);
    note.textContent = t('board.done');
  } catch (err) { note.textContent = err.message; }
  refresh();
});

document.getElementById('extend-selected').addEventListener('click', async (e) => {
  if (!selected.size) { note.textContent = t('board.noselection'); return; }
  e.target.disabled = true;
  note.textContent = t('board.working');
  const failed = [];
  for (const id of selected) {
    try {
      await call('POST', `${base}/sessions/${encodeURIComponent(id)}/extend`, extendBody());
    } catch (err) { failed.push(err.message); }
  }
  note.textContent = failed.length ? failed.join(' · ') : t('board.extended', { n: selected.size });
  selected.clear();
  e.target.disabled = false;
  refresh();
});

document.getElementById('close-class').addEventListener('click', async (e) => {
  if (!window.confirm(t('board.confirmclose'))) return;
  e.target.disabled = true;
  try {
    await call('POST', `${base}/close`);
    document.getElementById('class-state').textContent = t('board.closed');
  } catch (err) { note.textContent = err.message; e.target.disabled = false; }
});

render(JSON.parse(document.getElementById('board-data').textContent));
live(`${base}/events`, () => refresh(), (s) => {
  liveNote.textContent = s === 'open' ? t('board.live') : t('board.reconnecting');
  if (s === 'open') refresh(); // what happened while it was away
});
setInterval(refresh, 30000); // "last activity" and "stuck" move with the clock
