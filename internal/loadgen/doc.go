// Package loadgen drives oplab's lab server over HTTP as a class of
// learners does: each joins the class with its code, starts a lab, injects
// the first exercise's chaos and checks until the exercise passes. It
// measures what an instructor cares about on the day — how many learners
// were served, how long each waited from Start to the first exercise, how
// long a Check took — and samples the machine's CPU and memory meanwhile.
//
// It is bounded (a fixed number of learners, each with a deadline) and
// talks to one base URL, meant to be a server on loopback that the caller
// started.
package loadgen
