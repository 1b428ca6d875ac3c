package cli

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"oplab.dev/oplab/internal/board"
	"oplab.dev/oplab/internal/class"
)

func newClassListCmd(g *globals) *cobra.Command {
	var output outputFlag
	cmd := &cobra.Command{
		Use:     "list",
		Short:   "List the classes, newest first",
		Example: `  oplab class list -o json`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			asJSON, err := output.json()
			if err != nil {
				return err
			}
			svc, closeStore, err := g.classes(cmd.Context())
			if err != nil {
				return err
			}
			defer closeStore()
			cs, err := svc.Classes(cmd.Context(), class.LocalAdmin())
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				return writeJSON(out, cs)
			}
			if len(cs) == 0 {
				fmt.Fprintln(out, "No classes. Create one with `oplab class create NAME --labs ID,...`.")
				return nil
			}
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tSTATE\tLEARNERS\tLABS\tOPENS\tCLOSES\tOWNER\tJOIN CODE")
			for _, c := range cs {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", c.Name, c.State, places(&c), strings.Join(c.Labs, ","),
					when(c.Opens), when(c.Closes), c.Owner, c.JoinCode)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().StringVarP((*string)(&output), "output", "o", "", "output format: json")
	return cmd
}

func newClassShowCmd(g *globals) *cobra.Command {
	var output outputFlag
	cmd := &cobra.Command{
		Use:     "show NAME",
		Short:   "Show a class and its learners",
		Example: `  oplab class show morning`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			asJSON, err := output.json()
			if err != nil {
				return err
			}
			svc, closeStore, err := g.classes(cmd.Context())
			if err != nil {
				return err
			}
			defer closeStore()
			c, err := svc.Class(cmd.Context(), class.LocalAdmin(), args[0])
			if err != nil {
				return err
			}
			ms, err := svc.Members(cmd.Context(), class.LocalAdmin(), args[0])
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				return writeJSON(out, struct {
					*board.Class
					Learners []class.Member `json:"learners"`
				}{c, ms})
			}
			printClass(out, g.style(out), c)
			if len(ms) == 0 {
				fmt.Fprintln(out, "\nNo learners yet.")
				return nil
			}
			fmt.Fprintln(out)
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "LEARNER\tNAME\tJOINED")
			for _, m := range ms {
				fmt.Fprintf(tw, "%s\t%s\t%s\n", m.Learner, m.Name, when(m.Joined))
			}
			return tw.Flush()
		},
	}
	cmd.Flags().StringVarP((*string)(&output), "output", "o", "", "output format: json")
	return cmd
}

func newClassCloseCmd(g *globals) *cobra.Command {
	var output outputFlag
	cmd := &cobra.Command{
		Use:   "close NAME",
		Short: "Close a class: it admits nobody any more",
		Long: `Close a class: nobody joins or rejoins it from now on. Its records stay, for
"oplab class export"; "oplab class edit NAME --reopen" opens it again.`,
		Example: `  oplab class close morning`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			asJSON, err := output.json()
			if err != nil {
				return err
			}
			svc, closeStore, err := g.classes(cmd.Context())
			if err != nil {
				return err
			}
			defer closeStore()
			c, err := svc.CloseClass(cmd.Context(), class.LocalAdmin(), args[0])
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), c)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Closed class %q: it admits nobody now.\n", c.Name)
			return nil
		},
	}
	cmd.Flags().StringVarP((*string)(&output), "output", "o", "", "output format: json")
	return cmd
}

func newClassExportCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "export NAME",
		Short: "Write a class's results as CSV",
		Long: `Write one CSV row per learner and exercise of the class's labs: learner,
display name, lab, exercise, score and total of the latest check, T0 (the
fault in effect) and T1 (repaired) in UTC, the time to recovery in seconds,
the hints seen, and the lab's quiz score. A learner who did not reach an
exercise has a row with empty results.`,
		Example: `  oplab class export morning > results.csv`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			svc, closeStore, err := g.classes(cmd.Context())
			if err != nil {
				return err
			}
			defer closeStore()
			return svc.ExportClass(cmd.Context(), class.LocalAdmin(), args[0], cmd.OutOrStdout())
		},
	}
}

// printClass prints a class's settings.
func printClass(w io.Writer, s style, c *board.Class) {
	fmt.Fprintf(w, "Class %s (%s)\n", s.bold(c.Name), c.State)
	fmt.Fprintf(w, "  Join code:   %s\n", s.bold(c.JoinCode))
	fmt.Fprintf(w, "  Labs:        %s\n", strings.Join(c.Labs, ", "))
	fmt.Fprintf(w, "  Learners:    %s\n", places(c))
	fmt.Fprintf(w, "  Opens:       %s\n", when(c.Opens))
	fmt.Fprintf(w, "  Closes:      %s\n", when(c.Closes))
	limit := "none"
	if c.TimeLimit > 0 {
		limit = c.TimeLimit.String() + " per session"
	}
	fmt.Fprintf(w, "  Time limit:  %s\n", limit)
	warm := "none"
	if len(c.Warm) > 0 {
		var parts []string
		for _, id := range slices.Sorted(maps.Keys(c.Warm)) {
			parts = append(parts, fmt.Sprintf("%s=%d", id, c.Warm[id]))
		}
		warm = strings.Join(parts, ", ")
	}
	fmt.Fprintf(w, "  Warm:        %s\n", warm)
	fmt.Fprintf(w, "  Owner:       %s\n", c.Owner)
}

func places(c *board.Class) string {
	if c.Capacity == 0 {
		return fmt.Sprintf("%d (no cap)", c.Members)
	}
	return fmt.Sprintf("%d of %d", c.Members, c.Capacity)
}

func when(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.Local().Format("2006-01-02 15:04 MST")
}
