package cli

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"oplab.dev/oplab/internal/session"
)

// runCtx is what a session command works with.
type runCtx struct {
	l        *local
	id       string
	st       *localStatus
	out      io.Writer
	s        style
	json     bool
	progress session.Progress // nil with --output json
}

// stepsOnly returns a progress printer that leaves out the steps of phase
// (the command prints their outcome itself).
func (r *runCtx) stepsOnly(skip string) session.Progress {
	if r.progress == nil {
		return nil
	}
	return func(u session.Update) {
		if u.Step != nil && u.Step.Phase == skip {
			return
		}
		r.progress(u)
	}
}

// withSession opens the store, resolves the session and runs fn.
func withSession(cmd *cobra.Command, g *globals, f *sessionFlags, fn func(*runCtx) error) error {
	asJSON, err := f.json()
	if err != nil {
		return err
	}
	l, closeApp, err := g.sessions(cmd.Context())
	if err != nil {
		return err
	}
	defer closeApp()
	id, err := resolve(cmd.Context(), l, f.id)
	if err != nil {
		return err
	}
	st, err := l.Status(cmd.Context(), id)
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	r := &runCtx{l: l, id: id, st: st, out: out, s: g.style(out), json: asJSON}
	if !asJSON {
		r.progress = sessionPrinter(out, r.s)
	}
	return fn(r)
}

// sessionPrinter prints a session's progress: each step as it starts and
// ends, and each other timeline event as it is recorded.
func sessionPrinter(w io.Writer, s style) session.Progress {
	return func(u session.Update) {
		if st := u.Step; st != nil {
			switch {
			case !st.Done:
				fmt.Fprintf(w, " %s %s ...\n", s.dim("•"), st.Message)
			case st.Error != "":
				fmt.Fprintf(w, " %s %s (%.1fs): %s\n", s.bad("✗"), st.Message, st.Elapsed.Duration().Seconds(), st.Error)
			default:
				fmt.Fprintf(w, " %s %s (%.1fs)\n", s.ok("✓"), st.Message, st.Elapsed.Duration().Seconds())
			}
			return
		}
		switch u.Kind {
		case session.KindState:
			fmt.Fprintf(w, " %s %s\n", s.bold("→"), u.Message)
		case session.KindQueue:
			// The start waits for room; it goes on by itself (Ctrl-C leaves).
			fmt.Fprintf(w, " %s %s\n", s.dim("⧗"), u.Message)
		default:
			fmt.Fprintf(w, " %s %s\n", s.dim("·"), u.Message)
		}
	}
}

func printKubeconfig(w io.Writer, s style, st *localStatus) {
	if st.Kubeconfig == "" {
		return
	}
	fmt.Fprintf(w, "\nUse your own kubectl with the lab's cluster:\n  %s\n", s.bold("export KUBECONFIG="+shellQuote(st.Kubeconfig)))
	fmt.Fprintf(w, "Follow the operator's reconcile log with:\n  oplab logs -f\n")
}

// printExercise prints the current exercise and what to do next.
func printExercise(w io.Writer, s style, a *local, st *session.Status) error {
	if st.State == session.Completed {
		fmt.Fprintf(w, "\n%s Every exercise of lab %s passed. Take the quiz: oplab quiz %s\n", s.ok("★"), st.Lab, quizOf(a, st))
		return nil
	}
	l, err := a.Lab(st.Lab)
	if err != nil || st.Exercise >= len(l.Exercises) {
		return err
	}
	ex := l.Exercises[st.Exercise]
	lg := lang(st)
	fmt.Fprintf(w, "\n%s\n\n%s\n", s.bold(fmt.Sprintf("Exercise %d/%d: %s", st.Exercise+1, st.Exercises, ex.Title.In(lg))),
		strings.TrimSpace(ex.Instructions.In(lg)))
	// The session says which steps it allows now.
	next := "oplab lab status"
	switch {
	case slices.Contains(st.Actions, session.ActChaos) && len(ex.Chaos) > 0:
		next = "oplab lab chaos   (injects the fault; then repair it and run oplab lab check)"
	case slices.Contains(st.Actions, session.ActCheck):
		next = "oplab lab check   (when you have done the task)"
	}
	fmt.Fprintf(w, "\nTime limit %s. Next: %s\n", ex.TimeLimit.Duration, next)
	return nil
}

func quizOf(a *local, st *session.Status) string {
	if l, err := a.Lab(st.Lab); err == nil && l.Quiz != "" {
		return l.Quiz
	}
	return st.Lab
}

func printStatus(w io.Writer, s style, a *local, st *localStatus) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "Session\t%s (lab %s, %s provider)\n", st.ID, st.Lab, st.Provider)
	fmt.Fprintf(tw, "State\t%s\n", stateText(s, st.State))
	if st.Error != "" {
		fmt.Fprintf(tw, "Error\t%s\n", st.Error)
	}
	if st.Notice != "" {
		fmt.Fprintf(tw, "Notice\t%s\n", st.Notice)
	}
	if st.ExerciseID != "" {
		title := st.ExerciseID
		if l, err := a.Lab(st.Lab); err == nil {
			title += " — " + l.Exercises[st.Exercise].Title.In(lang(&st.Status))
		}
		fmt.Fprintf(tw, "Exercise\t%d/%d %s\n", st.Exercise+1, st.Exercises, title)
	} else {
		fmt.Fprintf(tw, "Exercise\t%d/%d done\n", st.Exercise, st.Exercises)
	}
	if a := st.Attempt; a != nil {
		line := "started " + clock(a.Started)
		if !a.T0.IsZero() {
			line += ", fault confirmed (T0) " + clock(a.T0)
		}
		fmt.Fprintf(tw, "\t%s, hints shown %d\n", line, st.HintsShown)
	}
	if st.Kubeconfig != "" {
		fmt.Fprintf(tw, "Cluster\t%s\n\texport KUBECONFIG=%s\n", st.Cluster, shellQuote(st.Kubeconfig))
	}
	fmt.Fprintf(tw, "Started\t%s\n", st.Created.Local().Format(time.DateTime))
	tw.Flush()
	if len(st.Results) == 0 {
		return
	}
	fmt.Fprintln(w, "\nResults")
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  ITEM\tSCORE\tPASSED\tTIME TO RECOVERY")
	for _, r := range st.Results {
		item := r.Item
		if r.Kind == session.ResultQuiz {
			item = "quiz " + r.Item
		}
		ttr := "-"
		if r.Recovery > 0 {
			ttr = r.Recovery.Duration().String()
		}
		fmt.Fprintf(tw, "  %s\t%d/%d\t%s\t%s\n", item, r.Score, r.Total, s.mark(r.Passed), ttr)
	}
	tw.Flush()
}

func stateText(s style, st session.State) string {
	switch st {
	case session.Completed, session.Ready:
		return s.ok(string(st))
	case session.Failed:
		return s.bad(string(st))
	case session.InExercise, session.Provisioning:
		return s.warn(string(st))
	}
	return string(st)
}

func clock(t time.Time) string { return t.Local().Format("15:04:05") }

func printCheck(w io.Writer, s style, a *local, res *session.CheckResult) {
	lg := lang(res.Status)
	fmt.Fprintf(w, "Goals of exercise %s\n", res.Exercise)
	for _, r := range res.Report.Results {
		fmt.Fprintf(w, "  %s %s (weight %d): %s\n", s.mark(r.Passed), r.Kind, r.Weight, r.Reason)
		if !r.Passed && r.Explain.In(lg) != "" {
			fmt.Fprintf(w, "      %s\n", s.dim(r.Explain.In(lg)))
		}
	}
	fmt.Fprintf(w, "Score %d/%d", res.Report.Score, res.Report.Total)
	if res.Late {
		fmt.Fprint(w, s.warn(" (after the time limit)"))
	}
	fmt.Fprintln(w)
	if !res.Passed {
		fmt.Fprintf(w, "%s. Keep going; `oplab lab hint` helps when you are stuck.\n", capitalize(notYet(res)))
		return
	}
	if res.Recovery > 0 {
		fmt.Fprintf(w, "%s Recovered: time to recovery %s (T1 %s, %s)\n", s.ok("✓"), s.bold(res.Recovery.Duration().String()),
			res.T1.Local().Format("15:04:05.000"), t1Source(res.T1Source))
		for _, ev := range res.T1Evidence {
			fmt.Fprintf(w, "    %s\n", s.dim(ev))
		}
	} else {
		fmt.Fprintf(w, "%s Every goal passed\n", s.ok("✓"))
	}
	_ = printExercise(w, s, a, res.Status)
}

func listSessions(cmd *cobra.Command, m *local, asJSON bool) error {
	list, err := m.SessionList(cmd.Context(), offlineLearner)
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	if asJSON {
		return writeJSON(out, list)
	}
	if len(list) == 0 {
		fmt.Fprintln(out, "No sessions. Start one with: oplab lab start ID")
		return nil
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SESSION\tLAB\tSTATE\tEXERCISE\tSTARTED")
	for _, s := range list {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", s.ID, s.Lab, s.State, s.Exercise+1, s.Created.Local().Format(time.DateTime))
	}
	return tw.Flush()
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// printTimeline prints a session's timeline, one event a line.
func printTimeline(cmd *cobra.Command, s style, m *local, id string, asJSON bool) error {
	var evs []session.Event
	for after := int64(0); ; {
		p, err := m.Timeline(cmd.Context(), id, after, 0)
		if err != nil {
			return err
		}
		evs = append(evs, p.Events...)
		if !p.More {
			break
		}
		after = p.Events[len(p.Events)-1].Seq
	}
	out := cmd.OutOrStdout()
	if asJSON {
		return writeJSON(out, evs)
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TIME\tKIND\tEXERCISE\tWHAT")
	for _, ev := range evs {
		what := ev.Message
		if ev.Step != nil && ev.Step.Error != "" {
			what = s.bad(what + ": " + ev.Step.Error)
		}
		ex := ev.Exercise
		if ex == "" {
			ex = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", ev.At.Local().Format("15:04:05.000"), ev.Kind, ex, what)
	}
	return tw.Flush()
}

// t1Source says in words how the moment of recovery was found.
func t1Source(src string) string {
	switch src {
	case session.T1Watched:
		return "watched: oplab saw the goals come to hold"
	case session.T1Evidence:
		return "from the cluster's evidence: nothing watched as the goals came to hold"
	}
	return "the moment of this check: nothing recorded when the goals came to hold"
}

// printCatalogue prints the labs, one a line, with where the learner
// stands in each.
func printCatalogue(w io.Writer, s style, labs []session.LabEntry) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tEXERCISES\tUP TO\tYOU\tTITLE")
	for _, l := range labs {
		title := l.Title
		if len(l.Missing) > 0 {
			title += s.warn(fmt.Sprintf(" (needs %s)", strings.Join(l.Missing, ", ")))
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\n", l.ID, l.Exercises, l.TimeLimit.Duration(), standing(s, l), title)
	}
	tw.Flush()
	fmt.Fprintln(w, "\nStart one with: oplab lab start ID")
}

// standing says where the learner stands in a lab, in a few words.
func standing(s style, l session.LabEntry) string {
	p := l.Progress
	switch p.State {
	case session.ProgressInProgress:
		return s.warn(fmt.Sprintf("exercise %d/%d", min(p.Exercise+1, l.Exercises), l.Exercises))
	case session.ProgressCompleted:
		text := fmt.Sprintf("done %d/%d", p.Score, p.Total)
		var ttr []string
		for _, r := range p.Results {
			if r.Kind == session.ResultExercise && r.Recovery > 0 {
				ttr = append(ttr, r.Recovery.Duration().String())
			}
		}
		if len(ttr) > 0 {
			text += ", recovered in " + strings.Join(ttr, ", ")
		}
		return s.ok(text)
	}
	return "-"
}
