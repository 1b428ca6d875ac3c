// A session's replay for a debrief: its events and the operator's log on
// one time axis, and a scrubber. Moving the scrubber shows the session as
// it stood at that moment: the events up to then, the checks as the last
// one before then found them, and the operator's log up to then.

import { call, el, t } from './api.js';

// logShown caps the log lines drawn at once: the newest up to the moment.
const logShown = 200;

const section = document.querySelector('.debrief[data-src]');
if (section) debrief(section);

function debrief(root) {
  const $ = (id) => root.querySelector(`#${id}`);
  const scrub = $('scrubber');
  const axis = $('debrief-axis');
  const cursor = $('debrief-cursor');
  let d = null; // the debrief, times as milliseconds
  let shownAt = -1;

  const offset = (ms) => {
    const s = Math.round(ms / 1000);
    const h = Math.floor(s / 3600);
    const m = Math.floor((s % 3600) / 60);
    const pad = (n) => String(n).padStart(2, '0');
    return h ? `${h}:${pad(m)}:${pad(s % 60)}` : `${m}:${pad(s % 60)}`;
  };

  const load = async () => {
    try {
      const raw = await call('GET', root.dataset.src);
      const start = Date.parse(raw.start);
      const end = Math.max(Date.parse(raw.end), start);
      d = {
        start, end,
        events: raw.events.filter((e) => e.kind !== 'step').map((e) => ({ ...e, at: Date.parse(e.at) })),
        log: raw.log.map((l) => ({ ...l, at: Date.parse(l.time) })),
      };
      const atEnd = scrub.disabled || Number(scrub.value) >= Number(scrub.max);
      root.dataset.start = String(start);
      // A range's value moves in whole steps from its minimum: a maximum
      // that is not a whole step could never be reached, nor the last
      // events with it.
      const step = Number(scrub.step) || 1;
      scrub.max = String(Math.ceil((end - start) / step) * step);
      scrub.disabled = false;
      if (atEnd) scrub.value = scrub.max;
      const notes = [t(raw.logSource ? `debrief.${raw.logSource}` : 'debrief.nolog')];
      if (raw.logDropped) notes.push(t('debrief.dropped', { n: raw.logDropped }));
      // The replay carries the newest events; it says how many it left out.
      if (raw.eventsDropped) notes.push(t('debrief.eventsdropped', { n: raw.eventsDropped }));
      $('debrief-status').textContent = notes.join(' ');
      drawAxis();
      drawEvents();
      shownAt = -1;
      show();
    } catch (e) {
      $('debrief-status').textContent = e.message;
    }
  };

  // pct is where on the axis a moment falls.
  const pct = (at) => (d.end > d.start ? ((at - d.start) / (d.end - d.start)) * 100 : 100);

  // at places e on the axis (through the CSSOM: the page's policy
  // refuses style attributes).
  const place = (e, when) => { e.style.left = `${pct(when)}%`; return e; };

  const drawAxis = () => {
    axis.replaceChildren(cursor);
    for (const l of d.log) axis.append(place(el('span', { class: `tick${l.level === 'error' ? ' error' : ''}` }), l.at));
    for (const ev of d.events) axis.append(place(el('span', { class: `mark ev-${ev.kind}`, title: ev.message }), ev.at));
  };

  const drawEvents = () => {
    $('debrief-events').replaceChildren(...d.events.map((ev) => el('li', { class: `ev ev-${ev.kind}`, 'data-kind': ev.kind, 'data-at': String(ev.at) },
      el('time', {}, offset(ev.at - d.start)), ' ', el('span', { class: 'kind' }, ev.kind), ' ',
      ev.exercise ? el('code', {}, ev.exercise) : null, ' ', ev.message)));
  };

  // show draws the session as it stood at the scrubber's moment.
  const show = () => {
    if (!d) return;
    const at = d.start + Number(scrub.value);
    if (at === shownAt) return;
    shownAt = at;
    place(cursor, at);
    $('debrief-at').textContent = t('debrief.at', { clock: new Date(at).toLocaleTimeString(), offset: offset(at - d.start) });

    const past = d.events.filter((ev) => ev.at <= at);
    let now = null;
    for (const li of $('debrief-events').children) {
      const p = Number(li.dataset.at) <= at;
      li.classList.toggle('past', p);
      li.classList.toggle('future', !p);
      li.classList.remove('now');
      if (p) now = li;
    }
    if (now) now.classList.add('now');

    const last = (kind) => past.findLast((ev) => ev.kind === kind);
    const st = last('state');
    const to = st?.data?.state?.to;
    const chaos = last('chaos');
    const recovered = last('recovered');
    const faultLive = chaos && chaos.data?.t0 && (!recovered || recovered.at < chaos.at);
    $('debrief-state').textContent = (to ? t(`state.${to}`) : '–') + (faultLive ? ` · ${t('debrief.fault')}` : '');
    $('debrief-exercise').textContent = past.findLast((ev) => ev.exercise)?.exercise || '–';

    const check = last('check');
    const results = check?.data?.report?.results || [];
    $('debrief-checks').replaceChildren(...(check
      ? results.map((r) => el('li', { class: r.passed ? 'pass' : 'fail', 'data-kind': r.kind },
        el('span', { class: 'mark' }, r.passed ? '✓' : '✗'), ' ', el('code', {}, r.kind), ' ', r.reason))
      : [el('li', { class: 'none' }, t('debrief.nocheck'))]));

    const upTo = d.log.filter((l) => l.at <= at);
    $('debrief-log-count').textContent = t('debrief.loglines', { n: upTo.length });
    $('debrief-log-count').dataset.count = String(upTo.length);
    $('debrief-log').replaceChildren(...upTo.slice(-logShown).map((l) => el('li', { class: `level-${l.level || 'none'}` },
      el('time', {}, offset(l.at - d.start)), ' ', l.object ? el('span', { class: 'object' }, l.object) : null, ' ', l.message,
      l.error ? el('span', { class: 'error' }, ` ${l.error}`) : null)));
  };

  scrub.addEventListener('input', show);
  $('debrief-refresh').addEventListener('click', load);
  // A page that follows the session live says when its timeline grew.
  document.addEventListener('oplab:timeline', load);
  load();
}
