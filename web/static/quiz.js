// The quiz: questions without their answers; the server grades a
// submission and only then says what was right.

import { call, el, t, text } from './api.js';

export async function quizForm(form, sessionID) {
  const base = `/api/sessions/${encodeURIComponent(sessionID)}`;
  const q = await call('GET', `${base}/quiz`);
  const items = q.questions.map((qq, n) => {
    const name = `q-${qq.id}`;
    const kids = [el('legend', {}, `${n + 1}. `, text(qq.prompt))];
    if (qq.type === 'cluster') {
      kids.push(el('input', { type: 'text', name, 'aria-label': t('quiz.answer') }));
    } else {
      for (const c of qq.choices ?? []) {
        kids.push(el('label', { class: 'choice' },
          el('input', { type: qq.type === 'multiple' ? 'checkbox' : 'radio', name, value: c.id }), ' ', text(c.text)));
      }
    }
    kids.push(el('p', { class: 'verdict', 'aria-live': 'polite' }));
    return el('fieldset', { 'data-question': qq.id }, ...kids);
  });
  const submit = el('button', { type: 'submit', class: 'primary' }, t('quiz.submit'));
  const score = el('p', { class: 'score', 'aria-live': 'polite' });
  form.replaceChildren(el('h3', {}, text(q.title)), ...items, submit, score);
  form.onsubmit = async (e) => {
    e.preventDefault();
    const answers = {};
    for (const qq of q.questions) {
      const name = `q-${qq.id}`;
      answers[qq.id] = [...form.querySelectorAll(`[name="${name}"]`)]
        .filter((i) => (i.type === 'text' ? i.value.trim() : i.checked))
        .map((i) => (i.type === 'text' ? i.value.trim() : i.value));
    }
    submit.disabled = true;
    try {
      const r = await call('POST', `${base}/quiz`, { answers });
      for (const qr of r.questions ?? []) {
        const fs = form.querySelector(`[data-question="${CSS.escape(qr.id)}"]`);
        fs.classList.toggle('correct', qr.correct);
        fs.classList.toggle('wrong', !qr.correct);
        const v = fs.querySelector('.verdict');
        v.textContent = `${qr.correct ? t('quiz.correct') : t('quiz.wrong')} ${text(qr.explanation)}`;
        if (qr.error) v.textContent += ` (${qr.error})`;
      }
      score.textContent = t('quiz.score', { correct: r.correct, total: r.total });
    } catch (err) {
      score.textContent = err.message;
      submit.disabled = false;
    }
  };
}
