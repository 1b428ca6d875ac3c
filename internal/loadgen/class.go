package loadgen

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"
)

// Options say what the class does.
type Options struct {
	// Base is the server's URL (http://127.0.0.1:PORT).
	Base string
	// Code is the class's join code.
	Code string
	// Lab is started by every learner; its first exercise must have chaos.
	Lab string
	// Learners is how many join; Spread is the time over which their
	// starts are spaced evenly (all at once when zero).
	Learners int
	Spread   time.Duration
	// Recovery bounds the checks after the chaos: a learner whose exercise
	// has not passed by then counts as not served.
	Recovery time.Duration
	// Watch is how long a learner follows the operator's log after the
	// chaos before the first Check (DefaultWatch when zero). A Check
	// polls each failing goal for up to the server's check timeout, so a
	// Check sent at once mostly times the recovery, not the grading.
	Watch time.Duration
	// CheckEvery is the pause between failing checks (a learner reading
	// the result); one second when zero.
	CheckEvery time.Duration
	// Progress hears one line per learner's milestone; nil for none.
	Progress func(string)
}

// Outcome is one learner's day.
type Outcome struct {
	Name    string
	Session string
	// StartToFirst is from the Start request to the first exercise ready.
	StartToFirst time.Duration
	// Started: the first exercise was ready (StartToFirst is then set).
	Started bool
	// Checks are the durations of every Check request.
	Checks []time.Duration
	// Served: started, and the first exercise passed; Recovery is then
	// the time to recovery the server recorded (T1 − T0), and T1Source
	// how it found T1 (watched, evidence or check).
	Served   bool
	Recovery time.Duration
	T1Source string
	Err      error
}

// Report is the class's day.
type Report struct {
	Outcomes []Outcome
	Machine  MachineStats
}

// Served counts the learners who were served.
func (r Report) Served() int {
	n := 0
	for _, o := range r.Outcomes {
		if o.Served {
			n++
		}
	}
	return n
}

// StartTimes are the Start → first exercise times of the learners whose
// start succeeded, sorted.
func (r Report) StartTimes() []time.Duration {
	return r.sorted(func(o Outcome) (time.Duration, bool) { return o.StartToFirst, o.Started })
}

// CheckTimes are every learner's Check durations together, sorted.
func (r Report) CheckTimes() []time.Duration {
	var ds []time.Duration
	for _, o := range r.Outcomes {
		ds = append(ds, o.Checks...)
	}
	slices.Sort(ds)
	return ds
}

// WorstLearnerCheckP95 is the largest of the learners' own p95 Check times:
// "every learner's p95 Check under X" holds when this is under X.
func (r Report) WorstLearnerCheckP95() time.Duration {
	var worst time.Duration
	for _, o := range r.Outcomes {
		cs := slices.Sorted(slices.Values(o.Checks))
		worst = max(worst, Quantile(cs, 0.95))
	}
	return worst
}

// Quantile is the q-quantile of sorted ds (nearest rank); 0 when empty.
func Quantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	i := int(q*float64(len(ds))+0.5) - 1
	return ds[min(max(i, 0), len(ds)-1)]
}

// DefaultWatch is Options.Watch's default: the failover lab's operator
// waits 4 s (failoverDelay) before it fails over, then promotes a replica.
const DefaultWatch = 15 * time.Second

// Run has o.Learners learners join, start o.Lab spaced over o.Spread, and
// each do the first exercise; it samples the machine throughout. Sessions
// are left running for the caller to inspect or stop (Outcome.Session).
func Run(ctx context.Context, o Options) (Report, error) {
	if o.Learners <= 0 || o.Base == "" || o.Code == "" || o.Lab == "" {
		return Report{}, fmt.Errorf("loadgen: Base, Code, Lab and a positive Learners are required")
	}
	if o.Watch <= 0 {
		o.Watch = DefaultWatch
	}
	if o.CheckEvery <= 0 {
		o.CheckEvery = time.Second
	}
	if o.Recovery <= 0 {
		o.Recovery = 2 * time.Minute
	}
	say := func(format string, args ...any) {
		if o.Progress != nil {
			o.Progress(fmt.Sprintf(format, args...))
		}
	}
	sampler := StartSampler(time.Second)
	out := make([]Outcome, o.Learners)
	var wg sync.WaitGroup
	for i := range o.Learners {
		var delay time.Duration
		if o.Learners > 1 {
			delay = o.Spread * time.Duration(i) / time.Duration(o.Learners-1)
		}
		wg.Go(func() {
			select {
			case <-time.After(delay):
			case <-ctx.Done():
				out[i] = Outcome{Name: fmt.Sprintf("learner-%02d", i+1), Err: ctx.Err()}
				return
			}
			out[i] = runLearner(ctx, o, fmt.Sprintf("learner-%02d", i+1))
			if out[i].Err != nil {
				say("%s: %v", out[i].Name, out[i].Err)
			} else {
				say("%s: first exercise after %s; checks %v; recovered in %s (T1 %s)", out[i].Name,
					out[i].StartToFirst.Round(time.Millisecond), rounded(out[i].Checks), out[i].Recovery, out[i].T1Source)
			}
		})
	}
	wg.Wait()
	return Report{Outcomes: out, Machine: sampler.Stop()}, nil
}

// runLearner is one learner's day: join, start, chaos, check until passed.
func runLearner(ctx context.Context, o Options, name string) Outcome {
	r := Outcome{Name: name}
	l := NewLearner(o.Base)
	if err := l.Join(ctx, o.Code, name); err != nil {
		r.Err = err
		return r
	}
	began := time.Now()
	s, err := l.Start(ctx, o.Lab)
	r.StartToFirst = time.Since(began)
	if err != nil {
		r.Err = fmt.Errorf("start: %w", err)
		return r
	}
	r.Session = s.ID
	if s.ExerciseID == "" {
		r.Err = fmt.Errorf("start: session %s is %s with no exercise (%s)", s.ID, s.State, s.Error)
		return r
	}
	r.Started = true
	if _, err := l.Chaos(ctx, s.ID, s.ExerciseID); err != nil {
		r.Err = fmt.Errorf("chaos: %w", err)
		return r
	}
	deadline := time.Now().Add(o.Recovery)
	select {
	case <-time.After(o.Watch):
	case <-ctx.Done():
		r.Err = ctx.Err()
		return r
	}
	for {
		began := time.Now()
		c, err := l.Check(ctx, s.ID)
		r.Checks = append(r.Checks, time.Since(began))
		if err != nil {
			r.Err = fmt.Errorf("check: %w", err)
			return r
		}
		if c.Passed {
			r.Served, r.Recovery, r.T1Source = true, time.Duration(c.Recovery)*time.Millisecond, c.T1Source
			return r
		}
		if time.Now().After(deadline) {
			r.Err = fmt.Errorf("exercise %s not passed %s after the chaos", s.ExerciseID, o.Recovery)
			return r
		}
		select {
		case <-time.After(o.CheckEvery):
		case <-ctx.Done():
			r.Err = ctx.Err()
			return r
		}
	}
}

func rounded(ds []time.Duration) []time.Duration {
	out := make([]time.Duration, len(ds))
	for i, d := range ds {
		out[i] = d.Round(time.Millisecond)
	}
	return out
}

// Recoveries are the served learners' times to recovery, sorted.
func (r Report) Recoveries() []time.Duration {
	return r.sorted(func(o Outcome) (time.Duration, bool) { return o.Recovery, o.Served })
}

// sorted collects of every outcome the duration pick returns when it says
// so, sorted.
func (r Report) sorted(pick func(Outcome) (time.Duration, bool)) []time.Duration {
	var ds []time.Duration
	for _, o := range r.Outcomes {
		if d, ok := pick(o); ok {
			ds = append(ds, d)
		}
	}
	slices.Sort(ds)
	return ds
}
