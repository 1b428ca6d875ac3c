// Package quiz defines oplab's quiz files (quizzes/<id>.yaml): bilingual
// single-choice, multiple-choice and cluster questions, their strict decoding
// and validation, the public view a client may see before it submits, and
// grading. Cluster questions are answered from the learner's own cluster;
// the grader asks a ClusterAnswers implementation for the true value.
package quiz
