package cli

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"oplab.dev/oplab/internal/app"
)

func newLabCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "lab",
		Short: "Work with labs",
	}
	cmd.AddCommand(newLabValidateCmd(g))
	cmd.AddCommand(newLabSelftestCmd(g))
	cmd.AddCommand(newLabRunCmds(g)...)
	return cmd
}

func newLabValidateCmd(_ *globals) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "validate [PATH]",
		Short: "Check labs, lessons and quizzes and every reference between them",
		Long: `Validate checks every lab file, lesson page and quiz of a course, and every
reference between them: lesson pages in both languages, quizzes, check and
action kinds and their parameters, links, and console command blocks.

PATH is a course folder (holding labs/, content/ and quizzes/), its labs/
folder or one lab's folder. Without PATH, the course built into oplab is
checked.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if output != "" && output != "json" {
				return fmt.Errorf("unknown output format %q: use json, or leave it out for text", output)
			}
			src := app.BuiltinCourse()
			if len(args) == 1 {
				var err error
				if src, err = app.FindCourse(args[0]); err != nil {
					return err
				}
			}
			errs := app.ValidateCourse(src)
			out := cmd.OutOrStdout()
			if output == "json" {
				if err := writeProblems(cmd, errs); err != nil {
					return err
				}
			} else {
				for _, e := range errs {
					fmt.Fprintln(out, e)
				}
				if len(errs) == 0 {
					fmt.Fprintln(out, summary(src))
				}
			}
			if len(errs) > 0 {
				return fmt.Errorf("validate course: %d problems found", len(errs))
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "output format: json")
	return cmd
}

func writeProblems(cmd *cobra.Command, ps []app.Problem) error {
	enc := json.NewEncoder(cmd.OutOrStdout())
	enc.SetIndent("", "  ")
	if err := enc.Encode(map[string]any{"ok": len(ps) == 0, "problems": ps}); err != nil {
		return fmt.Errorf("write json: %w", err)
	}
	return nil
}

// summary says what was checked, for a course with no problems.
func summary(src app.CourseSource) string {
	n := app.SizeOf(src)
	return fmt.Sprintf("ok: %d labs, %d lesson pages in %d languages, %d quizzes", n.Labs, n.Pages, n.Languages, n.Quizzes)
}
