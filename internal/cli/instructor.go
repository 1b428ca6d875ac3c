package cli

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"oplab.dev/oplab/internal/class"
)

func newInstructorCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "instructor",
		Short: "Manage the instructors who run classes",
	}
	cmd.AddCommand(newInstructorAddCmd(g), newInstructorListCmd(g), newInstructorRemoveCmd(g))
	return cmd
}

func newInstructorRemoveCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "remove NAME",
		Short: "Remove an instructor; their sign-ins end at once",
		Long: `Remove an instructor. Every browser signed in as them is refused from
its next request. An instructor who still owns classes is not removed:
give each class another owner first (oplab class edit CLASS --owner NAME).`,
		Example: `  oplab instructor remove grace`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			svc, closeStore, err := g.classes(cmd.Context())
			if err != nil {
				return err
			}
			defer closeStore()
			if err := svc.RemoveInstructor(cmd.Context(), class.LocalAdmin(), args[0]); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Removed instructor %q; their sign-ins are withdrawn.\n", args[0])
			return nil
		},
	}
}

func newInstructorAddCmd(g *globals) *cobra.Command {
	var admin bool
	var output outputFlag
	cmd := &cobra.Command{
		Use:   "add NAME",
		Short: "Add an instructor, with a password",
		Long: `Add an instructor who signs in to the dashboard with NAME and a password.

The password is read from the terminal without echo (twice, to catch a
typo), or from the first line of standard input when it is piped. It is
stored only as an argon2id hash. An admin manages every class; other
instructors manage the classes they own.`,
		Example: `  oplab instructor add ada --admin
  printf '%s\n' "$PASSWORD" | oplab instructor add grace`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			asJSON, err := output.json()
			if err != nil {
				return err
			}
			password, err := readPassword(g.streams, args[0])
			if err != nil {
				return err
			}
			svc, closeStore, err := g.classes(cmd.Context())
			if err != nil {
				return err
			}
			defer closeStore()
			in, err := svc.AddInstructor(cmd.Context(), args[0], password, admin)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), in)
			}
			role := "instructor"
			if in.Admin {
				role = "admin"
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Added %s %q.\n", role, in.Name)
			return nil
		},
	}
	cmd.Flags().BoolVar(&admin, "admin", false, "let the instructor manage every class")
	cmd.Flags().StringVarP((*string)(&output), "output", "o", "", "output format: json")
	return cmd
}

// readPassword reads a password without echo from a terminal, asking
// twice, or else the first line of a piped standard input.
func readPassword(s Streams, name string) (string, error) {
	if f, ok := s.In.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		ask := func(prompt string) (string, error) {
			fmt.Fprint(s.ErrOut, prompt)
			b, err := term.ReadPassword(int(f.Fd()))
			fmt.Fprintln(s.ErrOut)
			return string(b), err
		}
		p, err := ask(fmt.Sprintf("Password for %s: ", name))
		if err != nil {
			return "", fmt.Errorf("read password: %w", err)
		}
		again, err := ask("Repeat it: ")
		if err != nil {
			return "", fmt.Errorf("read password: %w", err)
		}
		if p != again {
			return "", errors.New("the passwords differ: nothing was changed")
		}
		return p, nil
	}
	line, err := bufio.NewReader(s.In).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("read password from standard input: %w", err)
	}
	p := strings.TrimRight(line, "\r\n")
	if p == "" {
		return "", errors.New("no password: type it at a terminal, or pipe it on standard input")
	}
	return p, nil
}

func newInstructorListCmd(g *globals) *cobra.Command {
	var output outputFlag
	cmd := &cobra.Command{
		Use:     "list",
		Short:   "List the instructors",
		Example: `  oplab instructor list -o json`,
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
			ins, err := svc.Instructors(cmd.Context())
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				return writeJSON(out, ins)
			}
			if len(ins) == 0 {
				fmt.Fprintln(out, "No instructors. Add one with `oplab instructor add NAME`.")
				return nil
			}
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tROLE\tADDED")
			for _, in := range ins {
				role := "instructor"
				if in.Admin {
					role = "admin"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\n", in.Name, role, in.Created.Local().Format(time.DateTime))
			}
			return tw.Flush()
		},
	}
	cmd.Flags().StringVarP((*string)(&output), "output", "o", "", "output format: json")
	return cmd
}
