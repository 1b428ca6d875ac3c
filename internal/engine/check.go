package engine

import (
	"context"
	"fmt"
	"sync"
	"time"

	"oplab.dev/oplab/internal/jsonconv"
	"oplab.dev/oplab/internal/lab"
)

// checkFn evaluates a check once: whether it passes, and why in one line.
type checkFn func(ctx context.Context, e *Engine, a *Attempt) (bool, string)

// checkFor returns the function that evaluates a check with the decoded
// params p, or nil for a kind the engine does not know.
func checkFor(p any) checkFn {
	switch p := p.(type) {
	case *lab.Condition:
		return func(ctx context.Context, e *Engine, _ *Attempt) (bool, string) {
			return e.conditionIs(ctx, p.Target, p.Type, p.Status, p.Reason)
		}
	case *lab.PrimaryChanged:
		return func(ctx context.Context, e *Engine, a *Attempt) (bool, string) {
			return e.primaryChanged(ctx, p.Target, a)
		}
	case *lab.PrimaryIs:
		return func(ctx context.Context, e *Engine, _ *Attempt) (bool, string) {
			return e.primaryIs(ctx, p.Target, p.Instance)
		}
	case *lab.ExactlyOnePrimary:
		return func(ctx context.Context, e *Engine, _ *Attempt) (bool, string) {
			return e.exactlyOnePrimary(ctx, p.Target)
		}
	case *lab.RWEndpointsPointAtPrimary:
		return func(ctx context.Context, e *Engine, _ *Attempt) (bool, string) {
			return e.rwEndpointsAtPrimary(ctx, p.Target)
		}
	case *lab.ReplicasReady:
		return func(ctx context.Context, e *Engine, _ *Attempt) (bool, string) {
			return e.replicasReady(ctx, p.Target, p.Count)
		}
	case *lab.ObservedGenerationCaughtUp:
		return func(ctx context.Context, e *Engine, _ *Attempt) (bool, string) {
			return e.generationCaughtUp(ctx, p.Target)
		}
	case *lab.RoleLeastPrivilege:
		return func(ctx context.Context, e *Engine, _ *Attempt) (bool, string) { return e.leastPrivilege(ctx, p) }
	case *lab.QuotaEnforced:
		return func(ctx context.Context, e *Engine, _ *Attempt) (bool, string) { return e.quotaEnforced(ctx, p) }
	case *lab.SameCluster:
		return func(ctx context.Context, e *Engine, a *Attempt) (bool, string) {
			return e.sameCluster(ctx, p.Target, a)
		}
	case *lab.QuotaPresent:
		return func(ctx context.Context, e *Engine, _ *Attempt) (bool, string) { return e.quotaPresent(ctx, p) }
	case *lab.EventSeen:
		return func(ctx context.Context, e *Engine, a *Attempt) (bool, string) { return e.eventSeen(ctx, p, a) }
	case *lab.LogLineSeen:
		return func(ctx context.Context, e *Engine, a *Attempt) (bool, string) { return e.logLineSeen(ctx, p, a) }
	case *lab.ClaimsBound:
		return func(ctx context.Context, e *Engine, _ *Attempt) (bool, string) { return e.claimsBound(ctx, p) }
	case *lab.ClaimsPending:
		return func(ctx context.Context, e *Engine, _ *Attempt) (bool, string) { return e.claimsPending(ctx, p.Target) }
	case *lab.ObjectExists:
		return func(ctx context.Context, e *Engine, _ *Attempt) (bool, string) { return e.objectExists(ctx, p) }
	case *lab.PodsReady:
		return func(ctx context.Context, e *Engine, _ *Attempt) (bool, string) { return e.podsReady(ctx, p) }
	case *lab.PatroniLeader:
		return func(ctx context.Context, e *Engine, a *Attempt) (bool, string) { return e.patroniLeader(ctx, p, a) }
	case *lab.SentinelMaster:
		return func(ctx context.Context, e *Engine, a *Attempt) (bool, string) { return e.sentinelMaster(ctx, p, a) }
	case *lab.ExecOutput:
		return func(ctx context.Context, e *Engine, _ *Attempt) (bool, string) { return e.execOutput(ctx, p) }
	case *lab.OperatorReady:
		return func(ctx context.Context, e *Engine, _ *Attempt) (bool, string) { return e.operatorReady(ctx) }
	case *lab.OperatorStopped:
		return func(ctx context.Context, e *Engine, _ *Attempt) (bool, string) {
			ok, why := e.operatorReady(ctx)
			return !ok, why
		}
	}
	return controllerCheck(p)
}

// RunChecks runs checks at once in the context of attempt a (nil: one that
// starts now): each polls within its time budget until it passes Passes
// times in a row.
func (e *Engine) RunChecks(ctx context.Context, a *Attempt, checks []lab.Check, o CheckOptions) (Report, error) {
	return e.runChecks(ctx, "", a, checks, o)
}

// runChecks is RunChecks reporting each result, once all are known, as a
// Step of phase (Progress is called from the caller's goroutine only).
func (e *Engine) runChecks(ctx context.Context, phase string, a *Attempt, checks []lab.Check, o CheckOptions) (Report, error) {
	if a == nil {
		a = &Attempt{Started: time.Now()}
	}
	results := make([]Result, len(checks))
	var shared rounds
	var wg sync.WaitGroup
	for i := range checks {
		wg.Go(func() {
			results[i] = e.runCheck(ctx, &shared, a, &checks[i], o)
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return Report{}, fmt.Errorf("run checks: %w", err)
	}
	rep := Report{Results: results, Passed: true, At: time.Now()}
	for i, r := range results {
		rep.Total += r.Weight
		if r.Passed {
			rep.Score += r.Weight
		} else {
			rep.Passed = false
		}
		report(o.Progress, Step{Phase: phase, Exercise: a.Exercise, Kind: r.Kind, Index: i, Total: len(results), Message: r.Reason, Done: true, Elapsed: r.Elapsed.Duration(), Err: failure(r)})
	}
	return rep, nil
}

// failure turns a failed result into an error for Step.Err.
func failure(r Result) error {
	if r.Passed {
		return nil
	}
	return fmt.Errorf("%s: %s", r.Kind, r.Reason)
}

// runCheck polls one check; its n-th evaluation shares what it reads with
// the other checks' n-th (see round).
func (e *Engine) runCheck(ctx context.Context, shared *rounds, a *Attempt, c *lab.Check, o CheckOptions) Result {
	res := Result{Kind: c.Kind, Weight: c.Weight, Explain: c.Explain}
	fn := checkFor(c.Params)
	if fn == nil {
		res.Reason = fmt.Sprintf("check kind %q is not implemented", c.Kind)
		return res
	}
	budget := e.budget(c.Timeout.Duration)
	for _, limit := range []time.Duration{e.budget(o.Timeout), o.Window} {
		if limit > 0 && (budget == 0 || limit < budget) {
			budget = limit
		}
	}
	interval := o.Interval
	if interval <= 0 {
		interval = DefaultInterval
	}
	start := time.Now()
	if isProbe(c.Params) {
		// A scenario, run once within its own budget, which neither a
		// Check's cap nor the self-test's windows cut short: each of its
		// waits for the controller is bounded by its within, and one cut
		// short would fail any controller.
		pctx, cancel := context.WithTimeout(ctx, e.budget(c.Timeout.Duration))
		defer cancel()
		res.Passed, res.Reason = fn(pctx, e, a)
		res.Polls = 1
		res.Elapsed = jsonconv.Duration(time.Since(start))
		return res
	}
	evaluations := 0
	res.Passed, res.Reason, res.Polls = poll(ctx, func(ctx context.Context) (bool, string) {
		evaluations++
		return fn(withRound(ctx, shared.nth(evaluations)), e, a)
	}, budget, interval, max(c.Passes, 1), o.Held)
	res.Elapsed = jsonconv.Duration(time.Since(start))
	return res
}

// poll evaluates fn every interval until it has passed need times in a
// row, or until budget (or ctx) ends; held, a first evaluation that passes
// is enough (see CheckOptions.Held). It returns the verdict, the last
// reason and the number of evaluations.
func poll(ctx context.Context, fn func(context.Context) (bool, string), budget, interval time.Duration, need int, held bool) (bool, string, int) {
	deadline := time.Now().Add(budget)
	run, polls := 0, 0
	for {
		ok, why := fn(ctx)
		polls++
		if ok {
			run++
		} else {
			run, held = 0, false
		}
		if run >= need || held {
			return true, why, polls
		}
		if time.Now().Add(interval).After(deadline) || ctx.Err() != nil {
			if run > 0 {
				why = fmt.Sprintf("%s, but not yet stable (%d of %d passes in a row)", why, run, need)
			}
			return false, why, polls
		}
		t := time.NewTimer(interval)
		select {
		case <-ctx.Done():
			t.Stop()
		case <-t.C:
		}
	}
}
