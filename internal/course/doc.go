// Package course checks the whole course at once: the labs, the lesson
// pages in every language and the quizzes, and every reference between
// them. It is what `oplab lab validate` runs and what the tests run on the
// shipped files.
package course
