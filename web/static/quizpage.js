// The quiz on its own page.
import { quizForm } from './quiz.js';

const main = document.getElementById('quizpage');
quizForm(document.getElementById('quiz-form'), main.dataset.session);
