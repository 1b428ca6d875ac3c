package class

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"oplab.dev/oplab/internal/jsonconv"
	"oplab.dev/oplab/internal/lab"
	"oplab.dev/oplab/internal/store"
)

// Row is one learner's outcome on one exercise of a class lab. A learner
// who never reached the exercise has a row with only the first four
// fields set.
type Row struct {
	Learner  string `json:"learner"`
	Name     string `json:"name"`
	Lab      string `json:"lab"`
	Exercise string `json:"exercise"`
	// Score and Total are the latest check's (weights of the passing
	// goals, of all goals); Passed when every goal passed.
	Score  int  `json:"score"`
	Total  int  `json:"total"`
	Passed bool `json:"passed"`
	// T0 is when the fault was confirmed in effect, T1 when every goal
	// first passed after it; Recovery is T1 − T0.
	T0       time.Time         `json:"t0,omitzero"`
	T1       time.Time         `json:"t1,omitzero"`
	Recovery jsonconv.Duration `json:"recoveryMs,omitempty"`
	// Hints is how many of the exercise's hints the learner saw: the
	// deepest one reached, so a hint seen again after a reset counts once.
	Hints int `json:"hints"`
	// QuizScore of QuizTotal is the lab's quiz, best attempt (the same on
	// every row of the lab); QuizTotal is zero when it was not taken.
	QuizScore int `json:"quizScore"`
	QuizTotal int `json:"quizTotal"`
}

// Header is the CSV export's first line.
var Header = []string{"learner", "display_name", "lab", "exercise", "score", "total", "t0", "t1",
	"time_to_recovery_s", "hints", "quiz_score", "quiz_total"}

// Export writes the results of a class a manages as CSV: Header, then a
// row per learner (in the order they joined), lab (in class order) and
// exercise (in lab order). Times are RFC 3339 in UTC, the time to recovery
// in seconds.
func (s *Service) Export(ctx context.Context, a Actor, name string, w io.Writer) error {
	rows, err := s.Results(ctx, a, name)
	if err != nil {
		return err
	}
	cw := csv.NewWriter(w)
	if err := cw.Write(Header); err != nil {
		return fmt.Errorf("export class %q: %w", name, err)
	}
	for _, r := range rows {
		if err := cw.Write(r.record()); err != nil {
			return fmt.Errorf("export class %q: %w", name, err)
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("export class %q: %w", name, err)
	}
	return nil
}

func (r Row) record() []string {
	rec := []string{r.Learner, spreadsheetSafe(r.Name), r.Lab, r.Exercise, "", "", "", "", "", strconv.Itoa(r.Hints), "", ""}
	if r.Total > 0 {
		rec[4], rec[5] = strconv.Itoa(r.Score), strconv.Itoa(r.Total)
	}
	rec[6], rec[7] = csvTime(r.T0), csvTime(r.T1)
	if r.Recovery > 0 {
		rec[8] = strconv.FormatFloat(r.Recovery.Duration().Seconds(), 'f', 3, 64)
	}
	if r.QuizTotal > 0 {
		rec[10], rec[11] = strconv.Itoa(r.QuizScore), strconv.Itoa(r.QuizTotal)
	}
	return rec
}

func csvTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02T15:04:05.000Z07:00")
}

// spreadsheetSafe keeps a learner's display name from being read as a
// formula when the CSV is opened in a spreadsheet.
func spreadsheetSafe(v string) string {
	if v != "" && strings.ContainsRune("=+-@\t\r", rune(v[0])) {
		return "'" + v
	}
	return v
}

// Results returns the rows Export writes.
func (s *Service) Results(ctx context.Context, a Actor, name string) ([]Row, error) {
	c, err := s.managed(ctx, a, name)
	if err != nil {
		return nil, err
	}
	labs := make(map[string]*lab.Lab, len(c.Labs))
	for _, id := range c.Labs {
		l, errs := lab.Load(s.o.Labs, id)
		if len(errs) > 0 {
			return nil, fmt.Errorf("class %q: load lab %s: %w", name, id, errs[0])
		}
		labs[id] = l
	}
	members, err := s.o.Store.Members(ctx, c.ID)
	if err != nil {
		return nil, err
	}
	sessions, err := s.o.Store.ClassSessions(ctx, c.ID)
	if err != nil {
		return nil, err
	}
	// outcomes[learner][lab] are the outcomes of the learner's sessions
	// of the lab, oldest first.
	outcomes := map[string]map[string][]*outcome{}
	for _, sess := range sessions {
		o, err := s.outcome(ctx, sess)
		if err != nil {
			return nil, fmt.Errorf("class %q: %w", name, err)
		}
		if outcomes[sess.Learner] == nil {
			outcomes[sess.Learner] = map[string][]*outcome{}
		}
		outcomes[sess.Learner][sess.Lab] = append(outcomes[sess.Learner][sess.Lab], o)
	}
	var rows []Row
	for _, m := range members {
		for _, id := range c.Labs {
			rows = append(rows, labRows(m, labs[id], outcomes[m.ID][id])...)
		}
	}
	return rows, nil
}

// labRows are a member's rows for one lab, from the outcomes of their
// sessions of it.
func labRows(m store.Member, l *lab.Lab, os []*outcome) []Row {
	var quiz *store.Result
	for _, o := range os {
		if q := o.quiz(l.Quiz); q != nil && (quiz == nil || better(q, quiz)) {
			quiz = q
		}
	}
	var rows []Row
	for _, ex := range l.Exercises {
		r := Row{Learner: m.ID, Name: m.Name, Lab: l.ID, Exercise: ex.ID}
		if quiz != nil {
			r.QuizScore, r.QuizTotal = quiz.Score, quiz.Total
		}
		if e := best(os, ex.ID); e != nil {
			e.fill(&r)
		}
		rows = append(rows, r)
	}
	return rows
}

// better reports whether result a beats b: passed first, then the higher
// share of the total, then the later.
func better(a, b *store.Result) bool {
	if a.Passed != b.Passed {
		return a.Passed
	}
	as, bs := float64(a.Score)/float64(max(a.Total, 1)), float64(b.Score)/float64(max(b.Total, 1))
	if as != bs {
		return as > bs
	}
	return a.At.After(b.At)
}

// best picks, among a learner's sessions of a lab, the record of exercise
// ex that counts: the one with the best result, or else the latest that
// got as far as the exercise.
func best(os []*outcome, ex string) *exerciseRecord {
	var pick *exerciseRecord
	for _, o := range os {
		e := o.exercises[ex]
		switch {
		case e == nil:
		case pick == nil, pick.result == nil:
			pick = e
		case e.result != nil && better(e.result, pick.result):
			pick = e
		}
	}
	return pick
}
