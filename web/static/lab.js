// The lab page: start with its steps shown, then the exercise controls and
// the live panels, all without a reload. The session's events stream keeps
// the page in step with what the CLI does to the same session.

import { call, el, live, t, text, duration } from './api.js';
import { tabs } from './tabs.js';
import { logPanel } from './log.js';
import { clusterPanel } from './cluster.js';
import { consolePanel } from './console.js';
import { editorPanel } from './editor.js';
import { codePanel } from './code.js';
import { quizForm } from './quiz.js';

const main = document.getElementById('lab');
const $ = (id) => document.getElementById(id);
const labID = main.dataset.lab;

let session = main.dataset.session;
let status = null;
let log = null;
let con = null;
let events = null;
let busy = false;
// acted counts the learner's actions: a status asked for before the
// latest one began is older than what that action answered, and is
// dropped rather than drawn over it.
let acted = 0;
// The status after a passed exercise, shown when the learner turns to the
// next one.
let pendingStatus = null;
let passedRecovery = 0;

// ---- start -----------------------------------------------------------

const steps = new Map();
let startedAt = 0;
let stepTimer = null;

function showStep(s) {
  const key = `${s.phase}/${s.index}`;
  let li = steps.get(key);
  if (!li) {
    li = el('li', { class: 'running', 'data-started': Date.now() },
      el('span', { class: 'msg' }), ' ', el('span', { class: 'elapsed' }));
    steps.set(key, li);
    $('steps').append(li);
  }
  li.querySelector('.msg').textContent = s.message;
  if (s.done) {
    li.className = s.error ? 'failed' : 'done';
    li.dataset.elapsed = String(s.elapsedMs || 0);
    li.querySelector('.elapsed').textContent = s.error ? s.error : duration(s.elapsedMs || 0);
  }
}

function tickSteps() {
  for (const li of $('steps').querySelectorAll('li.running')) {
    li.querySelector('.elapsed').textContent = duration(Date.now() - Number(li.dataset.started));
  }
}

let starting = false;
// waking: the page opened on a sleeping session, whose wake from disk may
// wait for room on the machine as a start does.
let waking = false;

// showQueue says where a start waiting for room on the machine stands.
function showQueue(q) {
  const where = t('lab.queue', { n: q.position, of: q.length });
  const when = q.estimateMs ? t('lab.queue.estimate', { d: duration(q.estimateMs) }) : t('lab.queue.noestimate');
  $('start-note').textContent = `${where} ${when}`;
}

function onUpdate(u) {
  if (u.kind === 'queue' && u.data?.queue && (starting || (waking && !entered))) showQueue(u.data.queue);
  if (u.kind === 'step' && u.data) {
    if (starting && !entered) $('start-note').textContent = t('lab.starting');
    // A start's steps go to its list; those of a running action (chaos,
    // reset) to the note under the controls.
    // A start's steps may come after its answer (the events stream and
    // the request are separate connections): they go to the list until the
    // page enters the session.
    if (starting || !entered) showStep(u.data);
    else if (busy) note(u.data.done ? `✓ ${u.data.message} ${duration(u.data.elapsedMs || 0)}` : `${u.data.message} …`);
  }
  if (!session || (u.session && u.session !== session)) return;
  if (u.kind === 'steady' && u.data) report($('steady'), t('lab.steady'), u.data);
  if (u.kind === 'chaos' && u.data?.error) note(u.data.error, true);
  if (['state', 'chaos', 'check', 'recovered', 'reset', 'exercise', 'hint', 'quiz'].includes(u.kind)) refreshSoon();
}

async function start() {
  $('start').disabled = true;
  $('start-error').hidden = true;
  $('steps').replaceChildren();
  steps.clear();
  $('start-note').textContent = t('lab.starting');
  startedAt = Date.now();
  starting = true;
  stepTimer = setInterval(tickSteps, 200);
  await listen('');
  try {
    const st = await call('POST', `/api/labs/${encodeURIComponent(labID)}/start`);
    enter(st);
  } catch (e) {
    $('start-error-text').textContent = e.message;
    $('start-error').hidden = false;
    $('start').disabled = false;
    $('start-note').textContent = '';
  } finally {
    starting = false;
    clearInterval(stepTimer);
    tickSteps();
  }
}

// listen follows the caller's events (and session id's timeline); the
// promise resolves once the stream is open, so no step is missed.
function listen(id) {
  events?.close();
  const q = id ? `?session=${encodeURIComponent(id)}` : '';
  return new Promise((resolve) => {
    events = live(`/api/events${q}`, onUpdate, (s) => {
      // data-live says the page hears its session's events.
      main.dataset.live = String(s === 'open' && Boolean(id));
      if (s === 'open') resolve();
    });
    setTimeout(resolve, 3000); // start anyway; the timeline has the steps
  });
}

// ---- the session -------------------------------------------------------

let entered = false;

function enter(st) {
  entered = true;
  session = st.id;
  main.dataset.session = session;
  // The steps of a start just made stay in view, with the total time.
  $('start').hidden = true;
  $('start-panel').hidden = steps.size === 0;
  $('start-note').textContent = startedAt ? t('lab.readyin', { d: duration(Date.now() - startedAt) }) : '';
  $('exercise-panel').hidden = false;
  $('panels').hidden = false;
  listen(session);
  if (main.dataset.streams === 'true') {
    log = logPanel(session);
    const ed = editorPanel(session);
    clusterPanel(session, (kind, name) => { panes.select('editor'); ed.load(kind, name); });
  } else {
    $('log-status').textContent = t('log.unavailable');
    $('cluster-status').textContent = t('cluster.unavailable');
  }
  if (main.dataset.console === 'true') {
    con = consolePanel(session);
    if (main.dataset.streams !== 'true') {
      const ed = editorPanel(session);
      void ed;
    }
  } else {
    $('console-help').textContent = t('console.unavailable');
    $('console-in').disabled = true;
  }
  if (main.dataset.code === 'true') codePanel(session);
  render(st);
}

let refreshTimer = null;
function refreshSoon() {
  clearTimeout(refreshTimer);
  refreshTimer = setTimeout(refresh, 150);
}

async function refresh() {
  if (!session || busy) return;
  const asked = acted;
  try {
    const st = await call('GET', `/api/sessions/${encodeURIComponent(session)}`);
    if (busy || asked !== acted) return;
    // A passed exercise stays on screen, with its results and time to
    // recovery, until the learner turns to the next one.
    if (entered && pendingStatus && st.state !== 'completed') pendingStatus = st;
    else if (entered) render(st);
    else if (st.state !== 'provisioning') { starting = false; enter(st); }
  } catch (e) { note(e.message, true); }
}

function ms(v) { return v ? new Date(v).getTime() : 0; }

function render(st) {
  status = st;
  const n = Number(main.dataset.exercises);
  const idx = Math.min(st.exercise ?? 0, n);
  for (const a of main.querySelectorAll('article.exercise')) a.hidden = Number(a.dataset.index) !== idx;
  $('ex-pos').textContent = idx < n ? t('lab.exercise', { n: idx + 1, total: n }) : t('lab.alldone');
  $('ex-state').textContent = t(`state.${st.state}`);
  const art = main.querySelector(`article.exercise[data-index="${idx}"]`);
  const chaos = art?.dataset.chaos === 'true';
  const att = st.attempt;
  const t0 = ms(att?.t0);
  log?.setT0(t0);
  // The session says which steps it allows now; the page only shows them.
  const can = (a) => (st.actions ?? []).includes(a);
  $('break').hidden = !chaos;
  $('break').disabled = !chaos || !can('chaos');
  $('check').disabled = !can('check');
  $('hint').disabled = !can('hint');
  $('reset').disabled = !can('reset');
  showBudget(st.budget);
  $('done').hidden = st.state !== 'completed';
  if (st.state === 'completed') {
    $('summary-link').href = `/sessions/${encodeURIComponent(st.id)}/summary`;
    showQuiz();
  }
  if (st.state === 'failed' || st.state === 'expired') {
    note(st.error || st.ended || t(`state.${st.state}`), true);
    $('start-panel').hidden = false;
    $('start').hidden = false;
    $('start').disabled = false;
  }
  clock();
}

function clock() {
  const c = $('clock');
  if (pendingStatus) {
    // A passed exercise waits for Next: its time to recovery stays.
    c.textContent = passedRecovery ? t('lab.recovered', { d: duration(passedRecovery) }) : '';
    c.classList.remove('live');
    return;
  }
  const att = status?.attempt;
  const t0 = ms(att?.t0);
  const t1 = ms(att?.t1);
  // The time the session slept is not the learner's: the clock leaves it
  // out, as the time to recovery does.
  const away = att?.awayMs || 0;
  if (t0 && t1) c.textContent = t('lab.recovered', { d: duration(t1 - t0 - away) });
  else if (t0) c.textContent = t('lab.sincet0', { d: duration(Date.now() - t0 - away) });
  else c.textContent = '';
  c.classList.toggle('live', Boolean(t0 && !t1));
}
setInterval(clock, 500);

// A cluster that runs out of its budget says nothing on the streams (its
// API server may be gone): the page asks for the session's status now and
// then while it is live.
setInterval(() => { if (entered && status?.active && !pendingStatus) refresh(); }, 10000);

// size formats bytes as the budget's figures are said.
function size(n) {
  if (!n) return '0';
  if (n >= 2 ** 30) return `${(n / 2 ** 30).toFixed(n % 2 ** 30 ? 1 : 0)} GiB`;
  return `${Math.round(n / 2 ** 20)} MiB`;
}

// showBudget shows what the session's cluster takes of its share of the
// machine and, when it ran into a bound, what happened and what to do.
function showBudget(b) {
  const line = $('budget');
  const box = $('trouble');
  line.hidden = !b;
  box.hidden = !b?.trouble;
  if (!b) return;
  line.textContent = t('budget.line', {
    mem: size(b.memory), memLimit: size(b.memoryLimit), etcd: size(b.etcd), etcdQuota: size(b.etcdQuota),
    disk: size(b.disk), diskLimit: size(b.diskLimit),
  });
  if (!b.trouble) return;
  const k = b.trouble.kind;
  const limit = { memory: b.memoryLimit, 'memory-full': b.memoryLimit, etcd: b.etcdQuota, disk: b.diskLimit }[k];
  box.dataset.kind = k;
  box.replaceChildren(el('strong', {}, t(`budget.trouble.${k}`, {
    limit: k === 'tasks' ? b.tasksLimit : size(limit), used: size(b.disk), down: (b.down ?? []).join(', ') || t('budget.aprocess'),
  })));
}

function note(msg, err) {
  const n = $('action-note');
  n.textContent = msg;
  n.classList.toggle('error', Boolean(err));
}

// report shows a checks report: each check with pass/fail, its weight and
// what it found, the lab's explanation on failure, and the score.
function report(box, title, r) {
  box.hidden = false;
  box.replaceChildren(
    el('h3', {}, title, ' ', el('span', { class: r.passed ? 'pass' : 'fail' }, r.passed ? t('lab.passed') : t('lab.failed')),
      ` · ${t('lab.score', { score: r.score, total: r.total })}`),
    el('ul', {}, ...(r.results ?? []).map((x) => el('li', { class: x.passed ? 'pass' : 'fail' },
      el('span', { class: 'mark', 'aria-label': x.passed ? t('lab.passed') : t('lab.failed') }, x.passed ? '✓' : '✗'), ' ',
      el('code', {}, x.kind), ` (${t('lab.weight', { w: x.weight })}) `, x.reason || '',
      log && r.at ? passLink(r.at) : null,
      !x.passed && text(x.explain) ? el('div', { class: 'explain' }, text(x.explain)) : null))));
}

// passLink shows, in the log, the last reconcile pass before the checks
// gave their verdict: what the operator had done by then.
function passLink(at) {
  const b = el('button', { type: 'button', class: 'link show-pass', 'data-at': ms(at) }, t('log.showpass'));
  b.addEventListener('click', () => { panes.select('log'); log?.jumpTo(ms(at)); });
  return el('span', {}, ' ', b);
}

async function act(button, path, body, pending) {
  if (busy) return null;
  busy = true;
  acted++;
  button.disabled = true;
  note(pending);
  try {
    return await call('POST', `/api/sessions/${encodeURIComponent(session)}/${path}`, body);
  } catch (e) {
    note(e.message, true);
    return null;
  } finally {
    busy = false;
    button.disabled = false;
  }
}

$('break').addEventListener('click', async () => {
  $('results').hidden = true;
  $('hints').hidden = true;
  const st = await act($('break'), 'chaos', { exercise: status?.exerciseId }, t('lab.breaking'));
  if (st) { note(t('lab.broken')); render(st); }
});

$('check').addEventListener('click', async () => {
  const r = await act($('check'), 'check', {}, t('lab.checking'));
  if (!r) { refresh(); return; }
  report($('results'), t('lab.results'), r.report);
  if (r.passed) {
    note(r.recoveryMs ? t('lab.recovered', { d: duration(r.recoveryMs) }) : t('lab.passed'));
    const last = r.status.exercise >= Number(main.dataset.exercises);
    $('next').hidden = last;
    pendingStatus = last ? null : r.status;
    passedRecovery = r.recoveryMs || 0;
    if (last) render(r.status);
    else {
      for (const b of ['check', 'hint', 'reset']) $(b).disabled = true;
      clock();
    }
  } else {
    note('');
  }
});

$('next').addEventListener('click', () => {
  $('next').hidden = true;
  $('results').hidden = true;
  $('steady').hidden = true;
  $('hints').hidden = true;
  const st = pendingStatus;
  pendingStatus = null;
  if (st) render(st);
  refresh();
});

$('hint').addEventListener('click', async () => {
  const r = await act($('hint'), 'hint', {}, t('lab.hinting'));
  if (!r) return;
  const box = $('hints');
  box.hidden = false;
  box.replaceChildren(el('h3', {}, t('lab.hints')),
    el('ol', {}, ...(r.shown ?? []).map((h) => el('li', {}, el('strong', {}, h.tier), ' ', text(h.text),
      h.unlock ? el('div', { class: 'note unlock' }, unlocked(h.unlock)) : null))),
    r.more && r.next ? el('p', { class: 'note next' }, nextHint(r.next)) : null);
  if (r.new) note('');
  else if (!r.more) note(t('lab.nomorehints'));
  else note(r.next ? '' : t('lab.nohintyet'));
});

// unlocked says what made a hint due: the evidence seen, or the time.
function unlocked(u) {
  switch (u.kind) {
    case 'time':
      return u.since === 'fault' ? t('lab.unlock.fault', { d: secs(u.afterMs) }) : t('lab.unlock.start', { d: secs(u.afterMs) });
    case 'log': return t('lab.unlock.log', { seen: u.seen });
    case 'event': return t('lab.unlock.event', { reason: u.reason, seen: u.seen });
    case 'message': return t('lab.unlock.message', { seen: u.seen });
    default: return '';
  }
}

// nextHint says what the next hint waits for: its time, its evidence, or
// only the learner's asking.
function nextHint(n) {
  const evs = (n.evidence ?? []).map((e) => {
    if (e.kind === 'event') return t('lab.ev.event', { reason: e.reason });
    if (e.kind === 'log') return t('lab.ev.log', { pattern: e.pattern });
    return t('lab.ev.message', { pattern: e.pattern });
  });
  const what = evs.length ? evs.reduce((a, b) => t('lab.ev.or', { a, b })) : '';
  if (n.due) return t('lab.next.due');
  if (n.leftMs > 0 && what) return t('lab.next.timeor', { d: secs(n.leftMs), what });
  if (n.leftMs > 0) return t('lab.next.time', { d: secs(n.leftMs) });
  return t('lab.next.evidence', { what });
}

// secs shows milliseconds as whole seconds, rounded up (40s, 1m05s): a
// hint promised "in 0s" would not be due yet.
function secs(ms) {
  const s = Math.ceil(ms / 1000);
  if (s < 60) return `${s}s`;
  return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
}

$('reset').addEventListener('click', async () => {
  const st = await act($('reset'), 'reset', {}, t('lab.resetting'));
  if (st) {
    note(t('lab.wasreset'));
    $('results').hidden = true;
    $('steady').hidden = true;
    render(st);
  }
});

let quizShown = false;
async function showQuiz() {
  if (quizShown) return;
  quizShown = true;
  $('quiz-panel').hidden = false;
  try { await quizForm($('quiz-form'), session); } catch (e) { $('quiz-form').textContent = e.message; }
}

// ---- wiring ------------------------------------------------------------

const panes = tabs(document.querySelector('.tabs'), (name) => { if (name === 'console') $('console-in').focus(); });

main.addEventListener('click', (e) => {
  const b = e.target.closest('button.console-run');
  if (!b) return;
  if (!con) { note(t('console.unavailable'), true); return; }
  panes.select('console');
  con.put(b.dataset.command);
});

$('start').addEventListener('click', start);
$('retry').addEventListener('click', start);

// The Start button works once this module has run.
$('start').disabled = false;
if (session && main.dataset.active === 'true') {
  if (main.dataset.state === 'provisioning') {
    // A start under way (in another tab, or from the CLI): its steps
    // come from the timeline, and the page enters the lab when it is ready.
    $('start').disabled = true;
    $('start-note').textContent = t('lab.starting');
    starting = true;
    listen(session);
  } else if (main.dataset.asleep === 'true') {
    // Nobody looked at the session for a while and its cluster sleeps:
    // asking for it wakes it, and the waking is a step like a start's.
    $('start').disabled = true;
    $('start-note').textContent = t('lab.waking');
    waking = true;
    startedAt = Date.now();
    stepTimer = setInterval(tickSteps, 200);
    listen(session)
      .then(() => call('GET', `/api/sessions/${encodeURIComponent(session)}`))
      .then(enter, (e) => {
        $('start-note').textContent = '';
        note(e.message, true);
      })
      .finally(() => {
        clearInterval(stepTimer);
        tickSteps();
      });
  } else {
    call('GET', `/api/sessions/${encodeURIComponent(session)}`).then(enter, (e) => note(e.message, true));
  }
} else if (session && main.dataset.state === 'completed') {
  $('start-note').textContent = t('lab.completedbefore');
}
