// Tabs that follow the WAI-ARIA pattern: arrows move between tabs, the
// selected tab's panel is shown.

export function tabs(list, onSelect = () => {}) {
  const all = [...list.querySelectorAll('[role="tab"]')];
  const select = (tab, focus) => {
    for (const t of all) {
      const on = t === tab;
      t.setAttribute('aria-selected', String(on));
      t.tabIndex = on ? 0 : -1;
      document.getElementById(t.getAttribute('aria-controls')).hidden = !on;
    }
    if (focus) tab.focus();
    onSelect(tab.id.replace(/^tab-/, ''));
  };
  list.addEventListener('click', (e) => {
    const tab = e.target.closest('[role="tab"]');
    if (tab) select(tab, false);
  });
  list.addEventListener('keydown', (e) => {
    const i = all.indexOf(document.activeElement);
    if (i < 0) return;
    let j = -1;
    if (e.key === 'ArrowRight') j = (i + 1) % all.length;
    else if (e.key === 'ArrowLeft') j = (i - 1 + all.length) % all.length;
    else if (e.key === 'Home') j = 0;
    else if (e.key === 'End') j = all.length - 1;
    if (j >= 0) { e.preventDefault(); select(all[j], true); }
  });
  return { select: (name) => select(document.getElementById(`tab-${name}`), false) };
}
