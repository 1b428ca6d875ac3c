// Talking to the server: JSON calls that carry the CSRF token, WebSockets
// that reconnect, and the page's strings.

const csrf = document.querySelector('meta[name="csrf-token"]')?.content || '';
const strings = JSON.parse(document.getElementById('strings')?.textContent || '{}');

// t returns the string for key in the page's language, with {name}
// placeholders filled from vars.
export function t(key, vars = {}) {
  const s = strings[key] ?? `[${key}]`;
  return s.replace(/\{(\w+)\}/g, (_, k) => (k in vars ? String(vars[k]) : `{${k}}`));
}

export class APIError extends Error {
  constructor(status, message) { super(message); this.status = status; }
}

// call sends a JSON request and returns the decoded answer.
export async function call(method, path, body) {
  const opts = { method, headers: { 'X-CSRF-Token': csrf }, credentials: 'same-origin' };
  if (body !== undefined) {
    opts.headers['Content-Type'] = 'application/json';
    opts.body = JSON.stringify(body);
  }
  const resp = await fetch(path, opts);
  const text = await resp.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch { data = { error: text }; }
  if (!resp.ok) throw new APIError(resp.status, (data && data.error) || resp.statusText);
  return data;
}

// stream posts body and calls onChunk with each piece of text the server
// sends, until it ends or signal aborts it.
export async function stream(path, body, onChunk, signal) {
  const resp = await fetch(path, {
    method: 'POST', signal, credentials: 'same-origin',
    headers: { 'X-CSRF-Token': csrf, 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (!resp.ok) {
    let msg = resp.statusText;
    try { msg = (await resp.json()).error || msg; } catch { /* not JSON */ }
    throw new APIError(resp.status, msg);
  }
  const reader = resp.body.getReader();
  const dec = new TextDecoder();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    onChunk(dec.decode(value, { stream: true }));
  }
}

// live opens a WebSocket on path and reopens it when it drops, asking for
// the frames after the last one seen (query parameters "epoch", the
// stream's incarnation, and "after", its last number) and after the last
// place seen ("cursor", which any server reading the same source knows).
// A stream that comes back as a new incarnation (the server restarted, or
// another server answers) goes on after the cursor when its hello says
// "resumed"; otherwise it starts over from its oldest frame, and onRestart
// is called first, so that what was shown can be cleared rather than shown
// twice. An attempt that is neither open nor refused after openTimeout (a
// Service still sending to a replica whose address is gone: nothing
// answers, and the browser would wait minutes for TCP to give up, holding
// back the page's other WebSockets to the host, which it opens one at a
// time) is abandoned and made again.
const openTimeout = 5000;

export function live(path, onMessage, onState = () => {}, onRestart = () => {}) {
  let after = 0;
  let epoch = '';
  let cursor = '';
  let closed = false;
  let delay = 500;
  let ws;
  const open = () => {
    const u = new URL(path, location.href);
    u.protocol = location.protocol === 'https:' ? 'wss:' : 'ws:';
    u.searchParams.set('after', String(after));
    if (epoch) u.searchParams.set('epoch', epoch);
    if (cursor) u.searchParams.set('cursor', cursor);
    const attempt = new WebSocket(u);
    ws = attempt;
    const hung = setTimeout(() => {
      if (attempt.readyState === WebSocket.CONNECTING) attempt.close();
    }, openTimeout);
    ws.onopen = () => { clearTimeout(hung); delay = 500; onState('open'); };
    ws.onmessage = (ev) => {
      const msg = JSON.parse(ev.data);
      if (msg.epoch && msg.epoch !== epoch) {
        if (epoch && !msg.resumed) { onRestart(); cursor = ''; }
        epoch = msg.epoch;
        after = 0;
      }
      if (msg.type === 'hello') return;
      if (typeof msg.seq === 'number' && msg.seq > 0) {
        if (msg.seq <= after) return; // seen before a reconnect
        after = msg.seq;
      }
      if (msg.cursor) cursor = msg.cursor;
      onMessage(msg);
    };
    ws.onclose = () => {
      clearTimeout(hung);
      onState('closed');
      if (closed) return;
      setTimeout(open, delay);
      delay = Math.min(delay * 2, 10000);
    };
  };
  open();
  return { close() { closed = true; ws?.close(); } };
}

// el makes an element: el('li', {class: 'x'}, 'text', child).
export function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') e.className = v;
    else if (k === 'text') e.textContent = v;
    else e.setAttribute(k, v === true ? '' : v);
  }
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

// duration shows nanoseconds or milliseconds as 1m05s / 2.4s.
export function duration(ms) {
  if (!(ms > 0)) return '–';
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(1)}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${String(Math.floor(s % 60)).padStart(2, '0')}s`;
  return `${Math.floor(m / 60)}h${String(m % 60).padStart(2, '0')}m`;
}

// text picks the page's language from a bilingual {en, ko} text.
export function text(v) {
  if (!v || typeof v === 'string') return v || '';
  const lang = document.documentElement.lang;
  return (lang === 'ko' && v.ko) ? v.ko : v.en;
}
