package cli

import (
	"bufio"
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
		Short: "Take a lab's quiz in the terminal; it is graded once, with your session of that lab",
		Long: `Quiz asks each question and reads your answer from standard input: a choice's
letter for single-choice questions, letters separated by commas or spaces for
multiple-choice ones, and a value (a pod name, a number) for questions about
your cluster, which are checked against the cluster of your lab session.

A lab's quiz is taken with a session of that lab (the active one, else the
newest; --session picks another of that lab) and recorded there. It is graded
once, or as many times as the quiz allows: every question must be answered,
and the right answers and explanations are shown when the grade is final.
Later answers are kept on the session's timeline and change nothing. The
course-wide quiz (course) is taken without a session and recorded nowhere.`,
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
			q, err := a.Quiz(args[0])
			if err != nil {
				return err
			}
			id, err := a.QuizSession(cmd.Context(), offlineLearner, f.id, q.ID)
			if err != nil {
				return quizSessionErr(err, f.id)
			}
			out := cmd.OutOrStdout()
			prompts := out
			if asJSON {
				prompts = cmd.ErrOrStderr()
			}
			s := g.style(prompts)
			if id != "" {
				v, err := a.QuizView(cmd.Context(), id)
				if err != nil {
					return err
				}
				printStanding(prompts, s, v)
			}
			answers, err := ask(prompts, s, bufio.NewReader(cmd.InOrStdin()), q, lg)
			if err != nil {
				return err
			}
			var res *quiz.Outcome
			if id != "" {
				res, err = a.Answer(cmd.Context(), id, q.ID, answers)
			} else {
				res, err = a.GradeQuiz(cmd.Context(), q.ID, answers)
			}
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(out, map[string]any{"session": id, "result": res})
			}
			printQuizResult(out, g.style(out), res, lg, id)
			return nil
		},
	}
	f.add(cmd)
	cmd.Flags().StringVar(&langFlag, "lang", "en", "language of the questions: en, ko")
	return cmd
}

// quizSessionErr says what to do when no session can take the quiz.
func quizSessionErr(err error, id string) error {
	switch {
	case errors.Is(err, session.ErrNoSession):
		return fmt.Errorf("%w (oplab lab start ID)", err)
	case errors.Is(err, session.ErrWrongQuiz):
		return fmt.Errorf("%w; pick a session of the quiz's lab with --session (oplab lab status --all lists them)", err)
	}
	return explainResolve(err, id)
}

// printStanding says, before the questions, whether these answers will
// be graded.
func printStanding(w io.Writer, s style, v *quiz.View) {
	switch {
	case v.Final:
		fmt.Fprintf(w, "%s\n\n", s.warn(fmt.Sprintf("Your grade of this quiz is final (%d/%d): these answers are kept with your session but not graded.",
			v.Grade.Correct, v.Grade.Total)))
	case v.Attempts > 1:
		fmt.Fprintf(w, "Attempt %d of %d: these answers are graded.\n\n", v.Attempt+1, v.Attempts)
	default:
		fmt.Fprint(w, "These answers are graded once: answer every question.\n\n")
	}
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

func printQuizResult(w io.Writer, s style, res *quiz.Outcome, lg locale.Lang, sessionID string) {
	fmt.Fprintf(w, "\n%s\n", s.bold("Results"))
	if !res.Graded {
		fmt.Fprintf(w, "%s\n", s.warn("Not graded: your grade was already final. These answers are kept on the session's timeline; the grade below stands."))
	}
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
		if e := strings.TrimSpace(r.Explanation.In(lg)); e != "" {
			fmt.Fprintf(w, "   %s\n", e)
		}
	}
	fmt.Fprintf(w, "\nScore %s", s.bold(fmt.Sprintf("%d/%d", res.Correct, res.Total)))
	switch {
	case sessionID == "":
		fmt.Fprintln(w, "\nNot recorded: the course-wide quiz is taken without a session.")
		return
	case res.Final:
		fmt.Fprintf(w, " (final, attempt %d of %d)\n", res.Attempt, res.Attempts)
	default:
		fmt.Fprintf(w, " (attempt %d of %d; the answers and explanations are shown when the grade is final)\n", res.Attempt, res.Attempts)
	}
	fmt.Fprintf(w, "Recorded with session %s.\n", sessionID)
}
