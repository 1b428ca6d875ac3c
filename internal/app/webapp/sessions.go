package webapp

import (
	"context"
	"errors"
	"fmt"
	"html/template"
	"time"

	"oplab.dev/oplab/internal/app"
	"oplab.dev/oplab/internal/locale"
	"oplab.dev/oplab/internal/metrics"
	"oplab.dev/oplab/internal/quiz"
	"oplab.dev/oplab/internal/server"
	"oplab.dev/oplab/internal/session"
)

func webLang(l string) locale.Lang {
	if v := locale.Lang(l); v.Valid() {
		return v
	}
	return locale.En
}

// Catalogue lists the labs the learner may run (a class member's class's
// labs) with where the learner stands in each.
func (w *Web) Catalogue(ctx context.Context, learner, l string) ([]server.LabEntry, error) {
	labs, err := w.a.Catalogue(ctx, learner, webLang(l))
	if err != nil {
		return nil, webErr(err)
	}
	out := make([]server.LabEntry, 0, len(labs))
	for _, lb := range labs {
		e := server.LabEntry{ID: lb.ID, Title: lb.Title, Summary: lb.Summary, Duration: lb.TimeLimit, Requires: lb.Requires, Missing: lb.Missing}
		if p := lb.Progress; p.State != session.ProgressNotStarted {
			e.State, e.Active, e.Session, e.Exercise, e.Score, e.Total = string(p.SessionState), p.SessionState.Active(), p.Session, p.Exercise+1, p.Score, p.Total
			for _, r := range p.Results {
				if r.Kind == session.ResultExercise && r.Recovery > 0 {
					e.Recoveries = append(e.Recoveries, r.Recovery)
				}
			}
		}
		out = append(out, e)
	}
	return out, nil
}

// Lab renders a lab's lesson and instructions in a language, once.
func (w *Web) Lab(_ context.Context, id, l string) (*server.LabView, error) {
	lb, err := w.a.Lab(id)
	if err != nil {
		return nil, classified{err, server.ErrNotFound}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	key := id + "/" + l
	if v, ok := w.views[key]; ok {
		return v, nil
	}
	lg := webLang(l)
	v := &server.LabView{ID: id, Title: lb.Title.In(lg), Summary: lb.Summary.In(lg), Quiz: lb.Quiz, Code: lb.LearnerWritesController()}
	for _, pid := range lb.Lesson {
		p, errs := w.render.Load(w.a.Content(), lg, pid)
		if len(errs) > 0 {
			return nil, fmt.Errorf("lesson %s: %w", pid, errors.Join(errs...))
		}
		v.Lesson = append(v.Lesson, server.LessonPage{ID: pid, Title: p.Meta.Title, HTML: template.HTML(p.HTML)}) // #nosec: goldmark escapes raw HTML
	}
	for _, ex := range lb.Exercises {
		f, errs := w.render.RenderFragment("labs/"+id+"/lab.yaml", lg, []byte(ex.Instructions.In(lg)))
		if len(errs) > 0 {
			return nil, fmt.Errorf("exercise %s: %w", ex.ID, errors.Join(errs...))
		}
		v.Exercises = append(v.Exercises, server.ExerciseView{ID: ex.ID, Title: ex.Title.In(lg), Instructions: template.HTML(f.HTML), // #nosec: goldmark escapes raw HTML
			TimeLimit: ex.TimeLimit.Duration, HasChaos: len(ex.Chaos) > 0, Hints: len(ex.Hints)})
	}
	w.views[key] = v
	return v, nil
}

func ref(id, learner, lab string, state session.State, exercise int, created time.Time) server.SessionRef {
	return server.SessionRef{ID: id, Learner: learner, Lab: lab, State: string(state), Active: state.Active(), Exercise: exercise, Created: created}
}

// LabSession returns the session lab's page shows (see session.Manager.Resolve).
func (w *Web) LabSession(ctx context.Context, learner, lab string) (*server.SessionRef, error) {
	id, err := w.a.Resolve(ctx, learner, lab, "")
	if errors.Is(err, session.ErrNoSession) {
		return nil, classified{err, server.ErrNotFound}
	}
	if err != nil {
		return nil, webErr(err)
	}
	return w.Session(ctx, id)
}

// Session returns a session's owner and place.
func (w *Web) Session(ctx context.Context, id string) (*server.SessionRef, error) {
	st, err := w.a.Status(ctx, id)
	if err != nil {
		return nil, webErr(err)
	}
	r := ref(st.ID, st.Learner, st.Lab, st.State, st.Exercise, st.Created)
	r.Asleep = st.Asleep != nil
	return &r, nil
}

// toUpdate is an event as the browser gets it: its data is the step, the
// report, or the whole event (attempt, recoveryMs, error …) by its kind.
func toUpdate(u session.Update) server.Update {
	out := server.Update{Seq: u.Seq, Kind: u.Kind, Exercise: u.Exercise, Message: u.Message, Time: u.At}
	switch {
	case u.Step != nil:
		out.Data = u.Step
	case u.Kind == session.KindSteady && u.Report != nil:
		out.Data = u.Report
	default:
		out.Data = u
	}
	return out
}

func progress(p func(server.Update)) session.Progress {
	if p == nil {
		return nil
	}
	return func(u session.Update) { p(toUpdate(u)) }
}

// status answers with the session's view (which holds no credentials).
func status[T any](v *T, err error) (any, error) {
	if err != nil {
		return nil, webErr(err)
	}
	return v, nil
}

func (w *Web) Status(ctx context.Context, id string) (any, error) {
	return status(w.a.Status(ctx, id))
}

func (w *Web) Wake(ctx context.Context, id string, p func(server.Update)) (any, error) {
	return status(w.a.Wake(ctx, id, progress(p)))
}

func (w *Web) Start(ctx context.Context, learner, labID, l string, p func(server.Update)) (any, error) {
	began := time.Now()
	// A learner who leaves the page while the start waits for room
	// leaves the queue; once started, the start runs to the end.
	o := session.StartOptions{Learner: learner, Lab: labID, Lang: l, Admit: w.a.AdmitWithin(server.Request(ctx))}
	v, err := w.a.Start(ctx, o, progress(p))
	switch {
	case errors.Is(err, app.ErrLeftQueue):
		// Nothing was started: nothing to time.
	case refusal(err) != nil:
		// The learner's class said no: nothing was started.
		w.rt.Metrics().Refused(metrics.RefusedForbidden)
	case errors.Is(err, session.ErrUnsupported):
		w.rt.Metrics().Refused(metrics.RefusedUnsupported)
	case errors.Is(err, session.ErrUnknownLab), errors.Is(err, session.ErrActive):
		// Refused before any provisioning: nothing to time.
	default:
		w.rt.Metrics().ObserveProvisioning(w.a.ProviderInfo().Name, time.Since(began), err)
	}
	if err == nil {
		w.rt.Started() // the start may have taken a warm session
	}
	return status(v, err)
}

func (w *Web) Chaos(ctx context.Context, id, exercise string, p func(server.Update)) (any, error) {
	return status(w.a.Chaos(ctx, id, exercise, progress(p)))
}

func (w *Web) Check(ctx context.Context, id string, p func(server.Update)) (any, error) {
	began := time.Now()
	res, err := w.a.Check(ctx, id, progress(p))
	if res != nil || err != nil && !errors.Is(err, session.ErrNotFound) && !errors.Is(err, session.ErrOutOfOrder) {
		lab := ""
		if st, serr := w.a.Status(ctx, id); serr == nil {
			lab = st.Lab
		}
		w.rt.Metrics().ObserveCheck(lab, time.Since(began), res != nil && res.Passed, err)
	}
	return status(res, err)
}

func (w *Web) Hint(ctx context.Context, id string) (any, error) {
	return status(w.a.Hint(ctx, id))
}

func (w *Web) Reset(ctx context.Context, id string, p func(server.Update)) (any, error) {
	return status(w.a.Reset(ctx, id, progress(p)))
}

func (w *Web) Stop(ctx context.Context, id string, p func(server.Update)) (any, error) {
	return status(w.a.Stop(ctx, id, "stopped from the browser", progress(p)))
}

func (w *Web) Timeline(ctx context.Context, id string, after int64, limit int) ([]server.Update, bool, error) {
	p, err := w.a.Timeline(ctx, id, after, limit)
	if err != nil {
		return nil, false, webErr(err)
	}
	out := make([]server.Update, 0, len(p.Events))
	for _, ev := range p.Events {
		u := toUpdate(ev)
		u.Session = id
		out = append(out, u)
	}
	return out, p.More, nil
}

// Quiz returns the quiz the session takes, as its learner may see it.
func (w *Web) Quiz(ctx context.Context, id string) (*quiz.View, error) {
	v, err := w.a.QuizView(ctx, id)
	return v, webErr(err)
}

// Answer grades a submission of the session's quiz.
func (w *Web) Answer(ctx context.Context, id string, answers quiz.Answers) (*quiz.Outcome, error) {
	out, err := w.a.Answer(ctx, id, "", answers)
	return out, webErr(err)
}

func (w *Web) Summary(ctx context.Context, id, l string) (*server.SummaryView, error) {
	st, err := w.a.Status(ctx, id)
	if err != nil {
		return nil, webErr(err)
	}
	lb, err := w.a.Lab(st.Lab)
	if err != nil {
		return nil, classified{err, server.ErrNotFound}
	}
	hints, err := w.a.HintCounts(ctx, id)
	if err != nil {
		return nil, webErr(err)
	}
	sum := &server.SummaryView{Session: ref(st.ID, st.Learner, st.Lab, st.State, st.Exercise, st.Created), LabTitle: lb.Title.In(webLang(l))}
	for _, ex := range lb.Exercises {
		r := server.ExerciseResult{ID: ex.ID, Title: ex.Title.In(webLang(l)), Hints: hints[ex.ID]}
		for _, res := range st.Results {
			if res.Kind == session.ResultExercise && res.Item == ex.ID {
				r.Score, r.Total, r.Passed, r.Recovery = res.Score, res.Total, res.Passed, res.Recovery.Duration()
			}
		}
		sum.Exercises = append(sum.Exercises, r)
	}
	for _, res := range st.Results {
		if res.Kind == session.ResultQuiz {
			sum.Quiz = &server.QuizScore{Correct: res.Score, Total: res.Total}
		}
	}
	return sum, nil
}
