// The cluster view, live: the PostgresCluster, its pods with roles and
// readiness, the -rw/-ro endpoints and events, redrawn on each snapshot.

import { el, live, t } from './api.js';

// Without onEdit (an instructor's read-only view) objects have no edit
// button; query is added to the stream's address.
export function clusterPanel(sessionID, onEdit, query = '') {
  const root = document.getElementById('cluster');
  const status = document.getElementById('cluster-status');

  const editButton = (kind, name) => onEdit && el('button', {
    type: 'button', class: 'edit', 'data-kind': kind, 'data-name': name,
    'aria-label': t('cluster.editof', { name }),
  }, t('cluster.edit'));
  root.addEventListener('click', (e) => {
    const b = e.target.closest('button.edit');
    if (b) onEdit(b.dataset.kind, b.dataset.name);
  });

  const table = (head, rows) => el('table', {},
    el('thead', {}, el('tr', {}, ...head.map((h) => el('th', {}, h)))),
    el('tbody', {}, ...rows));

  const render = (v) => {
    const parts = [];
    if (v.cluster) {
      const c = v.cluster;
      const name = c.name || v.name;
      parts.push(el('section', { class: 'pgc' },
        el('h3', {}, 'PostgresCluster ', el('code', {}, name), ' ', editButton('postgrescluster', name),
          ` ${t('cluster.replicas', { ready: c.readyReplicas ?? 0, want: c.replicas ?? 0 })}`),
        el('p', {}, `${t('cluster.phase')}: `, el('strong', { class: 'phase' }, c.phase || '–'),
          ` · ${t('cluster.primary')}: `, el('code', { class: 'current-primary' }, c.currentPrimary || '–'),
          ` · ${t('cluster.target')}: `, el('code', {}, c.targetPrimary || '–')),
        table([t('cluster.condition'), t('cluster.status'), t('cluster.reason')],
          (c.conditions ?? []).map((k) => el('tr', { class: k.status === 'True' ? 'ok' : 'bad' },
            el('td', {}, k.type), el('td', {}, k.status), el('td', {}, k.reason || ''))))));
    } else {
      parts.push(el('p', { class: 'note' }, t('cluster.nocluster', { name: v.name || '' })));
    }
    // The view carries the first of each (by name) and counts the rest:
    // "and N more".
    const more = (n, cls) => (n ? el('p', { class: `more ${cls}`, 'data-more': String(n) }, t('cluster.more', { n })) : null);
    parts.push(el('h3', {}, t('cluster.pods')),
      table([t('cluster.name'), t('cluster.role'), t('cluster.ready'), t('cluster.phase'), ''],
        (v.pods ?? []).map((p) => el('tr', { class: p.ready ? 'ok' : 'bad', 'data-pod': p.name },
          el('td', {}, el('code', {}, p.name)), el('td', { class: 'role' }, p.role || '–'),
          el('td', {}, p.ready ? '✓' : '✗'), el('td', {}, p.phase || ''),
          el('td', {}, editButton('pod', p.name))))),
      more(v.podsMore, 'pods-more'));
    parts.push(el('h3', {}, t('cluster.endpoints')),
      table([t('cluster.service'), t('cluster.addresses')],
        (v.endpoints ?? []).map((s) => el('tr', { 'data-service': s.service },
          el('td', {}, el('code', {}, s.service)),
          el('td', { class: 'addresses' }, (s.addresses ?? []).filter((a) => a.ready !== false)
            .map((a) => a.pod || a.ip).join(', ') || t('cluster.none'),
          s.addressesMore ? ` ${t('cluster.more', { n: s.addressesMore })}` : null)))));
    parts.push(el('h3', {}, t('cluster.events')),
      el('ol', { class: 'events' }, ...(v.events ?? []).slice(0, 30).map((e) => el('li', { class: e.type === 'Warning' ? 'trouble' : '' },
        el('strong', {}, e.reason || ''), ' ', el('code', {}, e.object || ''), ' ', e.message || ''))),
      more(v.eventsMore, 'events-more'));
    root.replaceChildren(...parts.filter(Boolean));
  };

  const conn = live(`/api/sessions/${encodeURIComponent(sessionID)}/streams/cluster${query}`,
    (f) => { if (f.type !== 'gap' && f.data) render(f.data); },
    (s) => { status.textContent = s === 'closed' ? t('cluster.reconnecting') : ''; });
  return { close() { conn.close(); } };
}
