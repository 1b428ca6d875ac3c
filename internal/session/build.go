package session

import (
	"context"
	"errors"
	"fmt"

	"oplab.dev/oplab/internal/controllab"
	"oplab.dev/oplab/internal/engine"
	"oplab.dev/oplab/internal/jsonconv"
	"oplab.dev/oplab/internal/store"
)

// ErrNoModule: the session's lab is not one whose learner writes the
// controller, so there is no module to read or build.
var ErrNoModule = errors.New("the learner writes no controller in this lab")

// hasModule refuses a session whose lab has no module of the learner's.
func hasModule(s *live) error {
	if !s.lab.LearnerWritesController() {
		return fmt.Errorf("session %s (lab %s): %w", s.rec.ID, s.lab.ID, ErrNoModule)
	}
	return nil
}

// BuildData is the detail of a build event: whether the learner's module
// compiled, the compiler's messages on their lines, and whether the
// program then replaced the running controller.
type BuildData struct {
	OK     bool                      `json:"ok"`
	Errors []controllab.CompileError `json:"errors,omitempty"`
	Ran    bool                      `json:"ran"`
	Took   jsonconv.Duration         `json:"tookMs"`
	// Error says why the build could not run, or why the program could
	// not be started.
	Error string `json:"error,omitempty"`
}

// BuildResult is what a learner sees of a build: BuildData and what the
// go command printed.
type BuildResult struct {
	BuildData
	Output string `json:"output,omitempty"`
}

// Build builds the learner's module (files) in their session's cluster's
// cell and, when it compiles and run is set, runs it as their controller
// in place of the one that runs, which runs until then. A module that does
// not compile is a result with OK false and the compiler's messages; it is
// kept on the timeline either way. Only a lab whose learner writes the
// controller builds.
func (m *Manager) Build(ctx context.Context, id string, files controllab.Files, run bool, progress Progress) (*BuildResult, error) {
	if err := files.Check(); err != nil {
		return nil, err
	}
	s, e, unlock, err := m.openModule(ctx, id, progress)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if release := m.burst(ctx, &s.rec); release != nil {
		defer release()
	}
	b, err := e.BuildAndRun(ctx, s.lab, files, run)
	res := &BuildResult{}
	if b != nil {
		res.OK, res.Errors, res.Output, res.Took = b.OK, b.Errors, b.Output, jsonconv.Duration(b.Took)
		res.Ran = b.OK && run && err == nil
	}
	msg := "the module built"
	switch {
	case err != nil:
		res.Error, msg = err.Error(), "the build could not run: "+err.Error()
		if b != nil && b.OK {
			msg = "the module built, but its program did not start: " + err.Error()
		}
	case !res.OK:
		msg = fmt.Sprintf("the module does not compile (%d errors)", len(res.Errors))
		if len(res.Errors) > 0 {
			msg += ": " + res.Errors[0].String()
		}
	case res.Ran:
		msg = "the module built and runs as the controller"
	}
	ev := newEvent(KindBuild, s.exerciseID(), msg, res.BuildData)
	if serr := m.save(context.WithoutCancel(ctx), s, progress, ev); serr != nil && err == nil {
		err = serr
	}
	if err != nil && b == nil {
		return nil, err
	}
	return res, nil
}

// burst lifts the CPU cap of the session's cell for a build when one of
// the Manager's bursts is free, and returns what caps it again; nil when
// none is free (the build runs at the cell's cap: within the learner's
// budget, only slower) or the cap could not be lifted. A learner waits for
// a build, at half a core three times as long as uncapped; the bursts
// bound how much of the machine builds take beyond the cells' caps.
func (m *Manager) burst(ctx context.Context, rec *store.Session) (release func()) {
	select {
	case m.bursts <- struct{}{}:
	default:
		return nil
	}
	p, err := m.providerOf(rec.Provider)
	lifted := false
	if err == nil {
		lifted, err = p.Unsettle(ctx, rec.Cluster)
	}
	if err != nil || !lifted {
		<-m.bursts
		if err != nil {
			m.log.Debug("a build runs at its cluster's cap", "session", rec.ID, "err", err)
		}
		return nil
	}
	return func() {
		if err := p.Settle(context.WithoutCancel(ctx), rec.Cluster); err != nil {
			m.log.Warn("cap a cell again after a build (Maintain will)", "session", rec.ID, "err", err)
		}
		<-m.bursts
	}
}

// Module returns the learner's module in session id: what they last
// built, or the lab's scaffold before their first build.
func (m *Manager) Module(ctx context.Context, id string) (controllab.Files, error) {
	s, e, unlock, err := m.openModule(ctx, id, nil)
	if err != nil {
		return nil, err
	}
	defer unlock()
	return e.Module(ctx, s.lab)
}

// openModule opens session id, whose lab must have a module of the
// learner's, and its engine; unlock ends the session's turn.
func (m *Manager) openModule(ctx context.Context, id string, progress Progress) (*live, *engine.Engine, func(), error) {
	s, unlock, err := m.open(ctx, id, progress)
	if err != nil {
		return nil, nil, nil, err
	}
	if err := hasModule(s); err != nil {
		unlock()
		return nil, nil, nil, err
	}
	e, err := m.engine(&s.rec)
	if err != nil {
		unlock()
		return nil, nil, nil, err
	}
	return s, e, unlock, nil
}
