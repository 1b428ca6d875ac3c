package lab

import (
	"time"

	"oplab.dev/oplab/internal/locale"
)

// Public is what a client may see of a lab: no hints (they are released by
// the engine as evidence appears), no chaos details and no solutions.
type Public struct {
	ID        string           `json:"id"`
	Title     locale.Text      `json:"title"`
	Summary   locale.Text      `json:"summary"`
	Lesson    []string         `json:"lesson"`
	Requires  []string         `json:"requires,omitempty"`
	Quiz      string           `json:"quiz"`
	Exercises []PublicExercise `json:"exercises"`
}

// PublicExercise is an exercise as a learner sees it before solving it.
type PublicExercise struct {
	ID           string        `json:"id"`
	Title        locale.Text   `json:"title"`
	Instructions locale.Text   `json:"instructions"`
	TimeLimit    time.Duration `json:"timeLimit"`
	HasChaos     bool          `json:"hasChaos"`
	Goals        []PublicGoal  `json:"goals"`
	Hints        int           `json:"hints"` // how many hints exist
}

// PublicGoal names a goal and its weight, so a learner knows what is checked.
type PublicGoal struct {
	Kind   string `json:"kind"`
	Weight int    `json:"weight"`
}

// Public returns the view of l that is safe to send to a client.
func (l *Lab) Public() Public {
	p := Public{ID: l.ID, Title: l.Title, Summary: l.Summary, Lesson: l.Lesson, Requires: l.Requires, Quiz: l.Quiz}
	for _, e := range l.Exercises {
		pe := PublicExercise{ID: e.ID, Title: e.Title, Instructions: e.Instructions, TimeLimit: e.TimeLimit.Duration,
			HasChaos: len(e.Chaos) > 0, Hints: len(e.Hints)}
		for _, g := range e.Goals {
			pe.Goals = append(pe.Goals, PublicGoal{Kind: g.Kind, Weight: g.Weight})
		}
		p.Exercises = append(p.Exercises, pe)
	}
	return p
}
