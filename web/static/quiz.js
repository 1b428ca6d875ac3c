// The quiz: questions without their answers. The server grades a
// submission, decides whether it counts, and shows the right answers and
// explanations only once the grade is final; this page renders what it
// is told.

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
  const standing = el('p', { class: 'standing' });
  const score = el('p', { class: 'score', 'aria-live': 'polite' });
  form.replaceChildren(el('h3', {}, text(q.title)), standing, ...items, submit, score);

  // expected names the right answer: a choice's text, or the value read
  // from the cluster.
  const expected = (qq, ids) => ids.map((id) => {
    const c = (qq?.choices ?? []).find((ch) => ch.id === id);
    return c ? `${id}) ${text(c.text)}` : id;
  }).join('; ');

  // show renders a grade: right or wrong per question and, when the
  // server sent them (a final grade), the answer and explanation.
  const show = (g, final, attempt, attempts) => {
    for (const qr of g.questions ?? []) {
      const fs = form.querySelector(`[data-question="${CSS.escape(qr.id)}"]`);
      if (!fs) continue;
      fs.classList.toggle('correct', qr.correct);
      fs.classList.toggle('wrong', !qr.correct);
      const parts = [qr.correct ? t('quiz.correct') : t('quiz.wrong')];
      if (!qr.correct && qr.expected?.length) {
        parts.push(t('quiz.expected', { answer: expected(q.questions.find((x) => x.id === qr.id), qr.expected) }));
      }
      if (qr.explanation) parts.push(text(qr.explanation));
      if (qr.error) parts.push(`(${qr.error})`);
      fs.querySelector('.verdict').textContent = parts.join(' ');
    }
    score.textContent = t('quiz.score', { correct: g.correct, total: g.total });
    standing.textContent = final ? t('quiz.final') : t('quiz.attempt', { attempt, attempts });
    submit.disabled = final;
  };

  if (q.grade) {
    show(q.grade, q.final, q.attempt, q.attempts);
  } else if (q.attempts > 1) {
    standing.textContent = t('quiz.attempts', { attempts: q.attempts });
  } else {
    standing.textContent = t('quiz.once');
  }

  form.onsubmit = async (e) => {
    e.preventDefault();
    const answers = {};
    for (const qq of q.questions) {
      const name = `q-${qq.id}`;
      answers[qq.id] = [...form.querySelectorAll(`[name="${name}"]`)]
        .filter((i) => (i.type === 'text' ? i.value.trim() : i.checked))
        .map((i) => (i.type === 'text' ? i.value.trim() : i.value));
    }
    // The server refuses a partial submission too; saying so here saves
    // the round trip.
    if (Object.values(answers).some((a) => a.length === 0)) {
      score.textContent = t('quiz.incomplete');
      return;
    }
    submit.disabled = true;
    try {
      const r = await call('POST', `${base}/quiz`, { answers });
      show(r, r.final, r.attempt, r.attempts);
      if (!r.graded) score.textContent = `${t('quiz.notGraded')} ${score.textContent}`;
    } catch (err) {
      score.textContent = err.message;
      submit.disabled = false;
    }
  };
}
