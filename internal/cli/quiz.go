package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"oplab.dev/oplab/internal/locale"
	"oplab.dev/oplab/internal/quiz"
	"oplab.dev/oplab/internal/session"
)

func newQuizCmd(g *globals) *cobra.Command {
	var (
		f        sessionFlags
		langFlag string
	)
	cmd := &cobra.Command{
		Use:   "quiz ID",
		Short: "Take a quiz in the terminal; cluster questions are checked against your lab's cluster",
		Long: `Quiz asks each question and reads your answer from standard input: a choice's
letter for single-choice questions, letters separated by commas or spaces for
multiple-choice ones, and a value (a pod name, a number) for questions about
your cluster, which are checked against the cluster of your lab session.
The answers are graded when all are given; each comes with its explanation,
and the score is recorded with your session.`,
		Example: `  oplab quiz failover
  printf 'a\nb,c\nprod-db-1\n' | oplab quiz failover -o json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			asJSON, err := f.json()
			if err != nil {
				return err
			}
			lg, err := parseLang(langFlag)
			if err != nil {
				return err
			}
			a, err := g.open(cmd.Context())
			if err != nil {
				return err
			}
			defer a.Close()
			q, err := a.Course.Quiz(args[0])
			if err != nil {
				return err
			}
			id, err := quizSession(cmd.Context(), a.Sessions, f.id)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			prompts := out
			if asJSON {
				prompts = cmd.ErrOrStderr()
			}
			s := newStyle(prompts)
			answers, err := ask(prompts, s, bufio.NewReader(cmd.InOrStdin()), q, lg)
			if err != nil {
				return err
			}
			var res *quiz.Result
			if id != "" {
				res, err = a.Sessions.Quiz(cmd.Context(), id, q.ID, answers)
			} else {
				res, err = a.Sessions.GradeQuiz(cmd.Context(), q.ID, answers)
			}
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(out, map[string]any{"session": id, "result": res})
			}
			printQuizResult(out, newStyle(out), q, res, lg, id)
			return nil
		},
	}
	f.add(cmd)
	cmd.Flags().StringVar(&langFlag, "lang", "en", "language of the questions: en, ko")
	return cmd
}

// quizSession picks the session a quiz is recorded with: the one named,
// else the learner's active or newest one, else none (the quiz is graded
// but not recorded).
func quizSession(ctx context.Context, m *session.Manager, id string) (string, error) {
	got, err := m.Resolve(ctx, offlineLearner, id)
	if id == "" && errors.Is(err, session.ErrNoSession) {
		return "", nil
	}
	return got, explainResolve(err, id)
}

// ask asks every question and reads the answers, asking again after an
// answer that is not one.
func ask(w io.Writer, s style, in *bufio.Reader, q *quiz.Quiz, lg locale.Lang) (quiz.Answers, error) {
	p := q.Public()
	fmt.Fprintf(w, "%s (%d questions)\n", s.bold(p.Title.In(lg)), len(p.Questions))
	answers := quiz.Answers{}
	for i, qq := range p.Questions {
		fmt.Fprintf(w, "\n%s %s\n", s.bold(fmt.Sprintf("%d.", i+1)), strings.TrimSpace(qq.Prompt.In(lg)))
		for _, c := range qq.Choices {
			fmt.Fprintf(w, "   %s) %s\n", c.ID, c.Text.In(lg))
		}
		for {
			fmt.Fprint(w, prompt(qq.Type))
			line, err := in.ReadString('\n')
			if line == "" && err != nil {
				return nil, fmt.Errorf("the quiz ended at question %d of %d, before it was answered: nothing was recorded", i+1, len(p.Questions))
			}
			got, err := quiz.ParseAnswer(qq, line)
			if err == nil {
				answers[qq.ID] = got
				break
			}
			fmt.Fprintln(w, s.warn(capitalize(err.Error())+"."))
		}
	}
	return answers, nil
}

func prompt(typ string) string {
	switch typ {
	case quiz.Single:
		return "Your answer (one letter): "
	case quiz.Multiple:
		return "Your answer (every right letter, e.g. a,c): "
	}
	return "Your answer (from your cluster): "
}

func printQuizResult(w io.Writer, s style, q *quiz.Quiz, res *quiz.Result, lg locale.Lang, sessionID string) {
	fmt.Fprintf(w, "\n%s\n", s.bold("Results"))
	for i, r := range res.Questions {
		fmt.Fprintf(w, "\n%s %d. %s\n", s.mark(r.Correct), i+1, r.ID)
		if !r.Correct {
			switch {
			case r.Error != "":
				fmt.Fprintf(w, "   %s\n", s.warn("could not be checked: "+r.Error))
			case len(r.Expected) > 0:
				fmt.Fprintf(w, "   the answer: %s\n", strings.Join(r.Expected, ", "))
			}
		}
		fmt.Fprintf(w, "   %s\n", strings.TrimSpace(r.Explanation.In(lg)))
	}
	fmt.Fprintf(w, "\nScore %s\n", s.bold(fmt.Sprintf("%d/%d", res.Correct, res.Total)))
	if sessionID != "" {
		fmt.Fprintf(w, "Recorded with session %s.\n", sessionID)
	} else {
		fmt.Fprintln(w, "Not recorded: you have no lab session.")
	}
	_ = q
}
