package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"sync"

	"oplab.dev/oplab/internal/course"
	"oplab.dev/oplab/internal/lab"
	"oplab.dev/oplab/internal/lesson"
	"oplab.dev/oplab/internal/locale"
	"oplab.dev/oplab/internal/quiz"
	"oplab.dev/oplab/internal/server"
	"oplab.dev/oplab/internal/session"
	"oplab.dev/oplab/internal/store"
)

// webApp gives the server what it needs of sessions and the course: the
// session manager the CLI uses, so that a lab started in the browser is
// the CLI's active session too.
type webApp struct {
	m      *session.Manager
	src    course.Sources
	labs   map[string]*lab.Lab
	order  []string
	render *lesson.Renderer

	mu    sync.Mutex
	views map[string]*server.LabView // by lab and language
}

var _ server.Application = (*webApp)(nil)

func newWebApp(m *session.Manager, src course.Sources) (*webApp, error) {
	ids, err := lab.IDs(src.Labs)
	if err != nil {
		return nil, err
	}
	a := &webApp{m: m, src: src, labs: map[string]*lab.Lab{}, order: ids, render: lesson.New(), views: map[string]*server.LabView{}}
	for _, id := range ids {
		l, errs := lab.Load(src.Labs, id)
		if len(errs) > 0 {
			return nil, fmt.Errorf("load lab %s: %w", id, errors.Join(errs...))
		}
		a.labs[id] = l
	}
	return a, nil
}

// classify keeps err's message and lets the server tell what kind it is.
type classified struct{ err, kind error }

func (c classified) Error() string   { return c.err.Error() }
func (c classified) Unwrap() []error { return []error{c.err, c.kind} }

func webErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, store.ErrNotFound), errors.Is(err, session.ErrUnknownLab):
		return classified{err, server.ErrNotFound}
	case errors.Is(err, session.ErrOutOfOrder), errors.Is(err, session.ErrEnded), errors.Is(err, session.ErrNotReady),
		errors.Is(err, session.ErrActive), errors.Is(err, session.ErrTransition), errors.Is(err, session.ErrUnsupported):
		return classified{err, server.ErrConflict}
	}
	return err
}

func webLang(l string) locale.Lang {
	if v := locale.Lang(l); v.Valid() {
		return v
	}
	return locale.En
}

func (a *webApp) Catalogue(ctx context.Context, learner, l string) ([]server.LabEntry, error) {
	recs, err := a.m.Sessions(ctx, learner)
	if err != nil {
		return nil, err
	}
	out := make([]server.LabEntry, 0, len(a.order))
	for _, id := range a.order {
		lb := a.labs[id]
		e := server.LabEntry{ID: id, Title: lb.Title.In(webLang(l)), Summary: lb.Summary.In(webLang(l)), Requires: lb.Requires}
		for _, ex := range lb.Exercises {
			e.Duration += ex.TimeLimit.Duration
		}
		for _, r := range recs { // newest first
			if r.Lab != id {
				continue
			}
			e.State, e.Session, e.Exercise = r.State, r.ID, r.Exercise+1
			if results, err := a.m.Status(ctx, r.ID); err == nil {
				for _, res := range results.Results {
					if res.Kind == store.ResultExercise {
						e.Score += res.Score
						e.Total += res.Total
						if res.Recovery > 0 {
							e.Recoveries = append(e.Recoveries, res.Recovery)
						}
					}
				}
			}
			break
		}
		out = append(out, e)
	}
	return out, nil
}

func (a *webApp) Lab(_ context.Context, id, l string) (*server.LabView, error) {
	lb, ok := a.labs[id]
	if !ok {
		return nil, classified{fmt.Errorf("no lab %q", id), server.ErrNotFound}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	key := id + "/" + l
	if v, ok := a.views[key]; ok {
		return v, nil
	}
	lg := webLang(l)
	v := &server.LabView{ID: id, Title: lb.Title.In(lg), Summary: lb.Summary.In(lg), Quiz: lb.Quiz}
	for _, pid := range lb.Lesson {
		p, errs := a.render.Load(a.src.Content, lg, pid)
		if len(errs) > 0 {
			return nil, fmt.Errorf("lesson %s: %w", pid, errors.Join(errs...))
		}
		v.Lesson = append(v.Lesson, server.LessonPage{ID: pid, Title: p.Meta.Title, HTML: template.HTML(p.HTML)}) // #nosec: goldmark escapes raw HTML
	}
	for _, ex := range lb.Exercises {
		f, errs := a.render.RenderFragment("labs/"+id+"/lab.yaml", lg, []byte(ex.Instructions.In(lg)))
		if len(errs) > 0 {
			return nil, fmt.Errorf("exercise %s: %w", ex.ID, errors.Join(errs...))
		}
		v.Exercises = append(v.Exercises, server.ExerciseView{ID: ex.ID, Title: ex.Title.In(lg), Instructions: template.HTML(f.HTML),
			TimeLimit: ex.TimeLimit.Duration, HasChaos: len(ex.Chaos) > 0, Hints: len(ex.Hints)})
	}
	a.views[key] = v
	return v, nil
}

func ref(s store.Session) server.SessionRef {
	return server.SessionRef{ID: s.ID, Learner: s.Learner, Lab: s.Lab, State: s.State, Exercise: s.Exercise, Created: s.Created}
}

func (a *webApp) Sessions(ctx context.Context, learner string) ([]server.SessionRef, error) {
	recs, err := a.m.Sessions(ctx, learner)
	if err != nil {
		return nil, err
	}
	out := make([]server.SessionRef, 0, len(recs))
	for _, r := range recs {
		out = append(out, ref(r))
	}
	return out, nil
}

func (a *webApp) Session(ctx context.Context, id string) (*server.SessionRef, error) {
	st, err := a.m.Status(ctx, id)
	if err != nil {
		return nil, webErr(err)
	}
	return &server.SessionRef{ID: st.ID, Learner: st.Learner, Lab: st.Lab, State: string(st.State), Exercise: st.Exercise, Created: st.Created}, nil
}

// view is a status as the browser may see it: without the kubeconfig.
func view(st *session.Status, err error) (any, error) {
	if err != nil {
		return nil, webErr(err)
	}
	c := *st
	c.Kubeconfig = ""
	return &c, nil
}

func toUpdate(u session.Update) server.Update {
	out := server.Update{Seq: u.Seq, Session: u.SessionID, Kind: u.Kind, Exercise: u.Exercise, Message: u.Message, Time: u.At}
	switch {
	case u.Step != nil:
		out.Data = u.Step
	case len(u.Data) > 0:
		out.Data = json.RawMessage(u.Data)
	}
	return out
}

func progress(p func(server.Update)) session.Progress {
	if p == nil {
		return nil
	}
	return func(u session.Update) { p(toUpdate(u)) }
}

func (a *webApp) Status(ctx context.Context, id string) (any, error) {
	return view(a.m.Status(ctx, id))
}

func (a *webApp) Start(ctx context.Context, learner, labID, l string, p func(server.Update)) (any, error) {
	return view(a.m.Start(ctx, session.StartOptions{Learner: learner, Lab: labID, Lang: l}, progress(p)))
}

func (a *webApp) Chaos(ctx context.Context, id, exercise string, p func(server.Update)) (any, error) {
	return view(a.m.Chaos(ctx, id, exercise, progress(p)))
}

func (a *webApp) Check(ctx context.Context, id string, p func(server.Update)) (any, error) {
	res, err := a.m.Check(ctx, id, progress(p))
	if err != nil {
		return nil, webErr(err)
	}
	if res.Status != nil {
		c := *res.Status
		c.Kubeconfig = ""
		res.Status = &c
	}
	return res, nil
}

func (a *webApp) Hint(ctx context.Context, id string) (any, error) {
	res, err := a.m.Hint(ctx, id)
	return res, webErr(err)
}

func (a *webApp) Reset(ctx context.Context, id string, p func(server.Update)) (any, error) {
	return view(a.m.Reset(ctx, id, progress(p)))
}

func (a *webApp) Stop(ctx context.Context, id string, p func(server.Update)) (any, error) {
	return view(a.m.Stop(ctx, id, "stopped from the browser", progress(p)))
}

func (a *webApp) Timeline(ctx context.Context, id string, after int64) ([]server.Update, error) {
	evs, err := a.m.Timeline(ctx, id, after)
	if err != nil {
		return nil, webErr(err)
	}
	out := make([]server.Update, 0, len(evs))
	for _, ev := range evs {
		u := session.Update{Event: ev}
		if st, ok := session.DecodeStep(ev); ok {
			u.Step = st
		}
		out = append(out, toUpdate(u))
	}
	return out, nil
}

func (a *webApp) quiz(ctx context.Context, id string) (*quiz.Quiz, error) {
	st, err := a.m.Status(ctx, id)
	if err != nil {
		return nil, webErr(err)
	}
	lb, ok := a.labs[st.Lab]
	if !ok || lb.Quiz == "" {
		return nil, classified{fmt.Errorf("lab %s has no quiz", st.Lab), server.ErrNotFound}
	}
	q, errs := quiz.Load(a.src.Quizzes, lb.Quiz)
	if len(errs) > 0 {
		return nil, fmt.Errorf("quiz %s: %w", lb.Quiz, errors.Join(errs...))
	}
	return q, nil
}

func (a *webApp) Quiz(ctx context.Context, id string) (*quiz.Public, error) {
	q, err := a.quiz(ctx, id)
	if err != nil {
		return nil, err
	}
	p := q.Public()
	return &p, nil
}

func (a *webApp) Answer(ctx context.Context, id string, answers quiz.Answers) (*quiz.Result, error) {
	q, err := a.quiz(ctx, id)
	if err != nil {
		return nil, err
	}
	for qid := range answers {
		if _, ok := q.Question(qid); !ok {
			return nil, classified{fmt.Errorf("quiz %s has no question %q", q.ID, qid), server.ErrInvalid}
		}
	}
	res, err := a.m.Quiz(ctx, id, q, answers)
	return res, webErr(err)
}

func (a *webApp) Summary(ctx context.Context, id, l string) (*server.SummaryView, error) {
	st, err := a.m.Status(ctx, id)
	if err != nil {
		return nil, webErr(err)
	}
	lb, ok := a.labs[st.Lab]
	if !ok {
		return nil, classified{fmt.Errorf("no lab %q", st.Lab), server.ErrNotFound}
	}
	evs, err := a.m.Timeline(ctx, id, 0)
	if err != nil {
		return nil, webErr(err)
	}
	hints := map[string]int{}
	for _, ev := range evs {
		if ev.Kind == session.KindHint {
			hints[ev.Exercise]++
		}
	}
	sum := &server.SummaryView{Session: server.SessionRef{ID: st.ID, Learner: st.Learner, Lab: st.Lab, State: string(st.State), Exercise: st.Exercise},
		LabTitle: lb.Title.In(webLang(l))}
	for _, ex := range lb.Exercises {
		r := server.ExerciseResult{ID: ex.ID, Title: ex.Title.In(webLang(l)), Hints: hints[ex.ID]}
		for _, res := range st.Results {
			if res.Kind == store.ResultExercise && res.Item == ex.ID {
				r.Score, r.Total, r.Passed, r.Recovery = res.Score, res.Total, res.Passed, res.Recovery
			}
		}
		sum.Exercises = append(sum.Exercises, r)
	}
	for _, res := range st.Results {
		if res.Kind == store.ResultQuiz {
			sum.Quiz = &server.QuizScore{Correct: res.Score, Total: res.Total}
		}
	}
	return sum, nil
}
