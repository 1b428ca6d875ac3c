// Package room decides whether the machine has room for one more
// cluster, from what it measures rather than from a guess, and queues the
// starts it cannot serve yet, first come first served.
//
// Reading order: policy.go (the rule, pure: measured numbers in, admit or
// queue out), proc.go (the numbers, sampled from /proc: the machine's free
// memory and idle CPU, and what the processes of each live cluster cost),
// gate.go (the FIFO queue in front of the rule, with each waiter's position
// and an estimate of its wait from measured start durations and the rate
// clusters free up).
package room
