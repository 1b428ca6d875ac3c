// The instructor's classes: the create form and each class's edit form.
// The server reads the fields (times in the browser's time zone); a form
// that is refused keeps what was typed and says why.

import { call, t } from './api.js';

const zone = Intl.DateTimeFormat().resolvedOptions().timeZone || '';
const pad = (n) => String(n).padStart(2, '0');
// localValue is d as a datetime-local input shows it.
const localValue = (d) => `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;

for (const input of document.querySelectorAll('input[data-utc]')) {
  if (input.dataset.utc) input.value = localValue(new Date(input.dataset.utc));
}

// The labs run in the order of the list: ↑ and ↓ move one.
document.addEventListener('click', (e) => {
  const b = e.target.closest('.lab-choices button');
  if (!b) return;
  const li = b.closest('li');
  if (b.classList.contains('up') && li.previousElementSibling) li.previousElementSibling.before(li);
  if (b.classList.contains('down') && li.nextElementSibling) li.nextElementSibling.after(li);
  b.focus();
});

// An edit link opens its class's form.
for (const a of document.querySelectorAll('a.edit-link')) {
  a.addEventListener('click', () => { document.getElementById(`edit-${a.dataset.class}`).open = true; });
}
const hash = decodeURIComponent(location.hash.slice(1));
if (hash.startsWith('edit-')) {
  const d = document.getElementById(hash);
  if (d) d.open = true;
}

// fields reads a class form as the server takes it.
const fields = (form) => {
  const f = form.elements;
  const body = {
    name: f.name.value.trim(),
    labs: [...form.querySelectorAll('input[name="labs"]:checked')].map((i) => i.value),
    capacity: f.capacity.value.trim(),
    opens: f.opens.value,
    closes: f.closes.value,
    timeLimit: f.timeLimit.value.trim(),
    warm: Object.fromEntries([...form.querySelectorAll('input[name^="warm."]')].map((i) => [i.name.slice(5), i.value.trim()])),
    zone,
  };
  if (form.dataset.mode === 'edit') {
    body.version = Number(form.dataset.version);
    body.newCode = !!f.newCode?.checked;
    body.reopen = !!f.reopen?.checked;
  }
  return body;
};

for (const form of document.querySelectorAll('form.class-form')) {
  const error = form.querySelector('.form-error');
  const note = form.querySelector('.form-note');
  const submit = form.querySelector('button[type="submit"]');
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    error.hidden = true;
    error.replaceChildren();
    submit.disabled = true;
    note.textContent = t('classform.working');
    const edit = form.dataset.mode === 'edit';
    const path = edit ? `/api/classes/${encodeURIComponent(form.dataset.class)}` : '/api/classes';
    try {
      const c = await call('POST', path, fields(form));
      const u = new URL('/instructor', location.href);
      u.searchParams.set(edit ? 'saved' : 'created', c.name);
      location.assign(u);
    } catch (err) {
      note.textContent = '';
      error.textContent = err.status === 409 && edit ? err.message : t('classform.refused', { error: err.message });
      if (err.status === 409 && edit) {
        const reload = document.createElement('button');
        reload.type = 'button';
        reload.className = 'reload';
        reload.textContent = t('classform.reload');
        reload.addEventListener('click', () => location.reload());
        error.append(' ', reload);
      }
      error.hidden = false;
      submit.disabled = false;
    }
  });
}

// After a save, the page says what changed.
const q = new URLSearchParams(location.search);
for (const [key, msg] of [['created', 'classform.created'], ['saved', 'classform.saved']]) {
  const name = q.get(key);
  const row = name && document.querySelector(`#classes tr[data-class="${CSS.escape(name)}"]`);
  if (!row) continue;
  row.classList.add('saved');
  const saved = document.getElementById('saved-note');
  saved.textContent = t(msg, { name, code: row.querySelector('.code').textContent });
  saved.hidden = false;
}
