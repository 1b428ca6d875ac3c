package lab

import "time"

// Event is a Kubernetes event as hints see it.
type Event struct {
	Reason  string
	Message string
}

// Observed is the evidence collected for an exercise so far: the time since
// T0 (or since the exercise started when it has no chaos), the operator's
// log lines and the events recorded since then.
type Observed struct {
	Elapsed time.Duration
	Log     []string
	Events  []Event
}

// NextHint returns the index of the hint to show after the first shown
// hints, if it is due. Hints are shown strictly in order, so evidence that
// matches a more explicit hint never skips the gentler ones before it.
func (e *Exercise) NextHint(shown int, o Observed) (int, bool) {
	if shown < 0 || shown >= len(e.Hints) {
		return 0, false
	}
	if !e.Hints[shown].Due(o) {
		return 0, false
	}
	return shown, true
}

// Score adds up the weights of the goals that passed; passed[i] is the
// result of Goals[i].
func (e *Exercise) Score(passed []bool) (got, total int) {
	for i, g := range e.Goals {
		total += g.Weight
		if i < len(passed) && passed[i] {
			got += g.Weight
		}
	}
	return got, total
}
