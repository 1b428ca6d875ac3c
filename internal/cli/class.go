package cli

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"oplab.dev/oplab/internal/class"
)

func newClassCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "class",
		Short: "Create and run classes of learners",
		Long: `A class is a group of learners who join with its code and run its labs in
order, between its opening and closing times, up to its capacity.

These commands act as an admin of the server whose data directory they
open: they manage every class.`,
	}
	cmd.AddCommand(newClassCreateCmd(g), newClassListCmd(g), newClassShowCmd(g), newClassEditCmd(g),
		newClassCloseCmd(g), newClassExportCmd(g))
	return cmd
}

// classSpecFlags are the flags that describe a class, shared by create
// and edit.
type classSpecFlags struct {
	labs      []string
	capacity  int
	opens     string
	closes    string
	timeLimit string
	owner     string
	warm      map[string]int
}

func (f *classSpecFlags) add(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringSliceVar(&f.labs, "labs", nil, "the labs the class runs, in order (oplab lab list shows them)")
	fl.IntVar(&f.capacity, "capacity", 0, "how many learners may join (0: no cap)")
	fl.StringVar(&f.opens, "opens", "", `when learners may start joining: "2026-12-07 09:00" (local time), RFC 3339, or "none"`)
	fl.StringVar(&f.closes, "closes", "", `when the class stops admitting anyone, in the same forms`)
	fl.StringVar(&f.timeLimit, "time-limit", "", "the time limit of each session, such as 90m or 1h30m (0: none)")
	fl.StringVar(&f.owner, "owner", "", "the instructor who runs the class (default: the only instructor)")
	fl.StringToIntVar(&f.warm, "warm", nil, "sessions of a lab to keep started ahead while the class is open, so a learner's start takes one at once: --warm failover=5 (0 removes a lab's); oplab serve keeps them")
}

func newClassCreateCmd(g *globals) *cobra.Command {
	var f classSpecFlags
	var output outputFlag
	cmd := &cobra.Command{
		Use:   "create NAME",
		Short: "Create a class and print its join code",
		Long: `Create a class. Its join code is printed: learners join with it and a
display name of their choice, and get a personal code to rejoin from another
device.`,
		Example: `  oplab class create morning --labs failover,rbac --capacity 30 \
      --opens "2026-12-07 09:00" --closes "2026-12-07 17:00" --time-limit 90m
  oplab class create evening --labs failover --owner grace -o json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			asJSON, err := output.json()
			if err != nil {
				return err
			}
			sp := class.Spec{Name: args[0], Labs: f.labs, Capacity: f.capacity, Owner: f.owner, Warm: f.warm}
			if sp.Opens, err = class.ParseWhen("--opens", f.opens, nil); err != nil {
				return err
			}
			if sp.Closes, err = class.ParseWhen("--closes", f.closes, nil); err != nil {
				return err
			}
			if sp.TimeLimit, err = class.ParseTimeLimit(f.timeLimit); err != nil {
				return err
			}
			svc, closeStore, err := g.classes(cmd.Context())
			if err != nil {
				return err
			}
			defer closeStore()
			c, err := svc.CreateClass(cmd.Context(), class.LocalAdmin(), sp)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				return writeJSON(out, c)
			}
			fmt.Fprintf(out, "Created class %q.\n", c.Name)
			printClass(out, g.style(out), c)
			return nil
		},
	}
	f.add(cmd)
	cmd.Flags().StringVarP((*string)(&output), "output", "o", "", "output format: json")
	return cmd
}

func newClassEditCmd(g *globals) *cobra.Command {
	var f classSpecFlags
	var newCode, reopen bool
	var output outputFlag
	cmd := &cobra.Command{
		Use:   "edit NAME",
		Short: "Change a class",
		Long: `Change the flags given and leave the rest as it is. --new-code replaces the
join code (learners who joined stay in); --reopen undoes "oplab class close".`,
		Example: `  oplab class edit morning --capacity 40 --closes "2026-12-07 18:00"
  oplab class edit morning --new-code --warm failover=10
  oplab class edit morning --opens none --reopen`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			asJSON, err := output.json()
			if err != nil {
				return err
			}
			ch, err := f.changes(cmd)
			if err != nil {
				return err
			}
			ch.NewCode, ch.Reopen = newCode, reopen
			svc, closeStore, err := g.classes(cmd.Context())
			if err != nil {
				return err
			}
			defer closeStore()
			c, err := svc.EditClass(cmd.Context(), class.LocalAdmin(), args[0], ch)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				return writeJSON(out, c)
			}
			fmt.Fprintf(out, "Changed class %q.\n", c.Name)
			printClass(out, g.style(out), c)
			return nil
		},
	}
	f.add(cmd)
	cmd.Flags().BoolVar(&newCode, "new-code", false, "replace the join code")
	cmd.Flags().BoolVar(&reopen, "reopen", false, "admit learners again after a close")
	cmd.Flags().StringVarP((*string)(&output), "output", "o", "", "output format: json")
	return cmd
}

// changes are the flags the user gave, as class.Changes.
func (f *classSpecFlags) changes(cmd *cobra.Command) (class.Changes, error) {
	var ch class.Changes
	fl := cmd.Flags()
	if fl.Changed("labs") {
		ch.Labs = f.labs
		if ch.Labs == nil {
			ch.Labs = []string{}
		}
	}
	if fl.Changed("capacity") {
		ch.Capacity = &f.capacity
	}
	if fl.Changed("time-limit") {
		d, err := class.ParseTimeLimit(f.timeLimit)
		if err != nil {
			return ch, err
		}
		ch.TimeLimit = &d
	}
	if fl.Changed("owner") {
		ch.Owner = &f.owner
	}
	if fl.Changed("warm") {
		ch.Warm = f.warm
	}
	for _, w := range []struct {
		flag, v string
		dst     **time.Time
	}{{"opens", f.opens, &ch.Opens}, {"closes", f.closes, &ch.Closes}} {
		if !fl.Changed(w.flag) {
			continue
		}
		t, err := class.ParseWhen("--"+w.flag, w.v, nil)
		if err != nil {
			return ch, err
		}
		*w.dst = &t
	}
	return ch, nil
}
