// Package course is the course as one thing: the labs, the lesson pages in
// every language and the quizzes, and every reference between them.
// Validate checks it all (what `oplab lab validate` runs and what the tests
// run on the shipped files); Load checks it once and keeps the parsed labs
// and quizzes, so the application looks them up by id without parsing again.
package course
