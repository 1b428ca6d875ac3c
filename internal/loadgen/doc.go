// Package loadgen drives oplab's lab server over HTTP as a class of
// learners does: each joins the class with its code, starts a lab, injects
// the first exercise's chaos and checks until the exercise passes. It
// measures what an instructor cares about on the day — how many learners
// were served, how long each waited from Start to the first exercise, how
// long a Check took — and samples the machine's CPU and memory meanwhile.
//
// Worst is the one member of a class who does their worst with the lab
// page alone (thousands of objects through the YAML editor, four console
// commands at once over and over, a flood of refused lines), counting
// what they did and what the server refused, for a benchmark to measure
// what the rest of the class pays for it.
//
// It is bounded (a fixed number of learners, each with a deadline; the
// worst learner's streams by counts and a time) and talks to one base
// URL, meant to be a server on loopback that the caller started.
package loadgen
