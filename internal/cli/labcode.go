package cli

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/spf13/cobra"

	"oplab.dev/oplab/internal/session"
)

// In a lab whose learner writes the controller, `oplab lab start` writes
// the module to a directory of theirs, and `oplab lab run` builds what is
// there and runs it as their cluster's controller.

// moduleDir is where a lab's module goes when --dir does not say: a
// directory named after the lab, in the working directory.
func moduleDir(flag, labID string) string {
	if flag != "" {
		return flag
	}
	return labID
}

// writeModule writes the session's module into dir when its lab has one,
// and says where it is and what to do next.
func writeModule(cmd *cobra.Command, l *local, id, labID, dir string, s style) error {
	dir = moduleDir(dir, labID)
	wrote, err := l.WriteModule(cmd.Context(), id, dir)
	if err != nil || !wrote {
		return err
	}
	abs, _ := filepath.Abs(dir)
	out := cmd.OutOrStdout()
	fmt.Fprintf(out, "\n%s Your module is in %s: write Reconcile in internal/controller/webapp_controller.go,\n", s.ok("✓"), abs)
	fmt.Fprintf(out, "  then build and run it with: oplab lab run --dir %s\n", dir)
	return nil
}

func newLabRunCmd(g *globals) *cobra.Command {
	var (
		f     sessionFlags
		dir   string
		build bool
	)
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Build your module and run it as your cluster's controller (labs in which you write the controller)",
		Long: `Run builds the module in --dir (by default the directory oplab lab start
wrote, named after the lab) in your cluster's sandbox, with the Go toolchain
and modules oplab brings: no network, your files only. When it compiles, the
program replaces your running controller (which runs until then); its log is
what oplab logs shows. When it does not, each compiler message is printed on
its file and line, and the controller that runs goes on running.`,
		Example: `  oplab lab start write-reconciler
  $EDITOR write-reconciler/internal/controller/webapp_controller.go
  oplab lab run
  oplab logs -f
  oplab lab check`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withSession(cmd, g, &f, func(r *runCtx) error {
				d := moduleDir(dir, r.st.Lab)
				if !r.json {
					fmt.Fprintf(r.out, "Building %s in your cluster's sandbox …\n", d)
				}
				res, err := r.l.BuildDir(cmd.Context(), r.id, d, !build, r.progress)
				if err != nil {
					return friendly(err)
				}
				if r.json {
					if err := writeJSON(r.out, res); err != nil {
						return err
					}
				} else {
					printBuild(r.out, r.s, res)
				}
				switch {
				case res.Error != "":
					return fmt.Errorf("%s", res.Error)
				case !res.OK:
					return fmt.Errorf("the module does not compile: %d error(s)", len(res.Errors))
				}
				return nil
			})
		},
	}
	f.add(cmd)
	cmd.Flags().StringVar(&dir, "dir", "", "the module's directory (default: the lab's id, as oplab lab start wrote it)")
	cmd.Flags().BoolVar(&build, "build-only", false, "build, but leave the running controller as it is")
	return cmd
}

// printBuild prints a build's outcome: the compiler's messages on their
// lines, or what runs now.
func printBuild(out io.Writer, s style, res *session.BuildResult) {
	took := res.Took.Duration().Seconds()
	switch {
	case !res.OK && len(res.Errors) > 0:
		fmt.Fprintf(out, "%s The module does not compile (%.1fs):\n", s.bad("✗"), took)
		for _, e := range res.Errors {
			fmt.Fprintf(out, "  %s\n", e)
		}
	case !res.OK:
		fmt.Fprintf(out, "%s The build failed (%.1fs):\n%s\n", s.bad("✗"), took, res.Output)
	case res.Error != "":
		fmt.Fprintf(out, "%s Built in %.1fs, but the program did not start: %s\n", s.bad("✗"), took, res.Error)
	case res.Ran:
		fmt.Fprintf(out, "%s Built in %.1fs; it runs as your controller now. Its log: oplab logs -f\n", s.ok("✓"), took)
	default:
		fmt.Fprintf(out, "%s Built in %.1fs; the running controller is unchanged.\n", s.ok("✓"), took)
	}
}
