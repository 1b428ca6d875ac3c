package cli

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"oplab.dev/oplab/internal/locale"
	"oplab.dev/oplab/internal/session"
)

// newLabRunCmds are the offline learner's commands under `oplab lab`.
func newLabRunCmds(g *globals) []*cobra.Command {
	return []*cobra.Command{
		newLabListCmd(g), newLabStartCmd(g), newLabStatusCmd(g), newLabChaosCmd(g),
		newLabCheckCmd(g), newLabHintCmd(g), newLabResetCmd(g), newLabStopCmd(g),
		newLabRunCmd(g),
	}
}

func parseLang(s string) (locale.Lang, error) {
	l := locale.Lang(s)
	if !l.Valid() {
		return "", fmt.Errorf("unknown language %q (use %v)", s, locale.All())
	}
	return l, nil
}

func newLabListCmd(g *globals) *cobra.Command {
	var f sessionFlags
	var langFlag string
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the labs: what each is, how long it takes, and where you stand in it",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
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
			labs, err := a.Catalogue(cmd.Context(), offlineLearner, lg)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				return writeJSON(out, labs)
			}
			printCatalogue(out, g.style(out), labs)
			return nil
		},
	}
	cmd.Flags().StringVarP((*string)(&f.output), "output", "o", "", "output format: json")
	cmd.Flags().StringVar(&langFlag, "lang", "en", "language of the texts: en, ko")
	return cmd
}

func newLabStartCmd(g *globals) *cobra.Command {
	var (
		f        sessionFlags
		langFlag string
		dir      string
	)
	cmd := &cobra.Command{
		Use:   "start ID",
		Short: "Start a lab: create a cluster, install the operator, set the lab up",
		Long: `Start creates a cluster of your own, installs the reference operator in it and
runs the lab's setup, showing each step. It prints the kubeconfig so your own
kubectl works against the cluster. One lab runs at a time; stop it with
oplab lab stop.`,
		Example: `  oplab lab start failover
  export KUBECONFIG=...   # as printed
  oplab lab chaos`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			asJSON, err := f.json()
			if err != nil {
				return err
			}
			l, err := parseLang(langFlag)
			if err != nil {
				return err
			}
			a, closeApp, err := g.sessionsOn(cmd.Context(), g.appConfig())
			if err != nil {
				return err
			}
			defer closeApp()
			if _, err := a.Lab(args[0]); err != nil {
				return err
			}
			if err := a.CheckModuleDir(args[0], moduleDir(dir, args[0])); err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			s := g.style(out)
			var progress session.Progress
			if !asJSON {
				fmt.Fprintf(out, "Starting lab %s on the %s provider\n", args[0], g.providerName)
				progress = sessionPrinter(out, s)
			}
			warnUncontained(cmd.ErrOrStderr(), a.App)
			start := time.Now()
			st, err := a.Start(cmd.Context(), session.StartOptions{Learner: offlineLearner, Lab: args[0], Lang: string(l)}, progress)
			if err != nil {
				return friendly(err)
			}
			ls := a.withPath(cmd.Context(), st)
			if asJSON {
				return writeJSON(out, ls)
			}
			fmt.Fprintf(out, "\n%s Lab %s is ready: session %s (%.1fs).\n", s.ok("✓"), st.Lab, st.ID, time.Since(start).Seconds())
			printKubeconfig(out, s, ls)
			if err := writeModule(cmd, a, st.ID, st.Lab, dir, s); err != nil {
				return err
			}
			return printExercise(out, s, a, st)
		},
	}
	f.add(cmd)
	cmd.Flags().Lookup("session").Hidden = true
	cmd.Flags().StringVar(&langFlag, "lang", "en", "language of the lab's texts: en, ko")
	cmd.Flags().StringVar(&dir, "dir", "", "in a lab where you write the controller, where its module goes (default: the lab's id); it must be new or empty")
	return cmd
}

func newLabStatusCmd(g *globals) *cobra.Command {
	var (
		f        sessionFlags
		all      bool
		timeline bool
	)
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show the session: state, exercise, kubeconfig, results and times to recovery",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			asJSON, err := f.json()
			if err != nil {
				return err
			}
			a, closeApp, err := g.sessions(cmd.Context())
			if err != nil {
				return err
			}
			defer closeApp()
			out := cmd.OutOrStdout()
			if all {
				return listSessions(cmd, a, asJSON)
			}
			id, err := resolve(cmd.Context(), a, f.id)
			if err != nil {
				return err
			}
			if timeline {
				return printTimeline(cmd, g.style(cmd.OutOrStdout()), a, id, asJSON)
			}
			st, err := a.Status(cmd.Context(), id)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(out, st)
			}
			printStatus(out, g.style(out), a, st)
			return nil
		},
	}
	f.add(cmd)
	cmd.Flags().BoolVar(&all, "all", false, "list every session")
	cmd.Flags().BoolVar(&timeline, "timeline", false, "show everything the session recorded, in order")
	return cmd
}

func newLabChaosCmd(g *globals) *cobra.Command {
	var f sessionFlags
	cmd := &cobra.Command{
		Use:   "chaos [EXERCISE]",
		Short: "Start the current exercise: check the steady state, inject its chaos, confirm the fault (T0)",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withSession(cmd, g, &f, func(r *runCtx) error {
				exercise := ""
				if len(args) == 1 {
					exercise = args[0]
				}
				st, err := r.l.Chaos(cmd.Context(), r.id, exercise, r.progress)
				if err != nil {
					return friendly(err)
				}
				if r.json {
					return writeJSON(r.out, st)
				}
				if st.Attempt != nil && !st.Attempt.T0.IsZero() {
					fmt.Fprintf(r.out, "\n%s Fault confirmed at %s (T0). The clock runs: repair the cluster, then run `oplab lab check`.\n",
						r.s.warn("!"), st.Attempt.T0.Local().Format("15:04:05.000"))
				} else {
					fmt.Fprintf(r.out, "\nExercise %s started; it has no chaos: do the task, then run `oplab lab check`.\n", st.ExerciseID)
				}
				return nil
			})
		},
	}
	f.add(cmd)
	return cmd
}

func newLabCheckCmd(g *globals) *cobra.Command {
	var f sessionFlags
	cmd := &cobra.Command{
		Use:   "check",
		Short: "Check the current exercise's goals; when all pass, record the time to recovery and move on",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withSession(cmd, g, &f, func(r *runCtx) error {
				res, err := r.l.Check(cmd.Context(), r.id, r.stepsOnly("goals"))
				if err != nil {
					return friendly(err)
				}
				if r.json {
					if err := writeJSON(r.out, res); err != nil {
						return err
					}
				} else {
					printCheck(r.out, r.s, r.l, res)
				}
				if !res.Passed {
					return fmt.Errorf("exercise %s: %d of %d points, %s", res.Exercise, res.Report.Score, res.Report.Total, notYet(res))
				}
				return nil
			})
		},
	}
	f.add(cmd)
	return cmd
}

func newLabHintCmd(g *globals) *cobra.Command {
	var f sessionFlags
	cmd := &cobra.Command{
		Use:   "hint",
		Short: "Show the next hint, when the evidence for it is there or its time has come",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withSession(cmd, g, &f, func(r *runCtx) error {
				res, err := r.l.Hint(cmd.Context(), r.id)
				if err != nil {
					return friendly(err)
				}
				if r.json {
					return writeJSON(r.out, res)
				}
				printHints(r.out, r.s, lang(&r.st.Status), res)
				return nil
			})
		},
	}
	f.add(cmd)
	return cmd
}

func newLabResetCmd(g *globals) *cobra.Command {
	var f sessionFlags
	cmd := &cobra.Command{
		Use:   "reset",
		Short: "Undo the current exercise's chaos and return to its steady state, keeping the cluster",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withSession(cmd, g, &f, func(r *runCtx) error {
				st, err := r.l.Reset(cmd.Context(), r.id, r.progress)
				if err != nil {
					return friendly(err)
				}
				if r.json {
					return writeJSON(r.out, st)
				}
				fmt.Fprintf(r.out, "\n%s Exercise %s reset. Start it again with `oplab lab chaos`.\n", r.s.ok("✓"), st.ExerciseID)
				return nil
			})
		},
	}
	f.add(cmd)
	return cmd
}

func newLabStopCmd(g *globals) *cobra.Command {
	var f sessionFlags
	cmd := &cobra.Command{
		Use:   "stop",
		Short: "End the session and delete its cluster (its results are kept)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withSession(cmd, g, &f, func(r *runCtx) error {
				st, err := r.l.Stop(cmd.Context(), r.id, "stopped by the learner", r.progress)
				if err != nil {
					return err
				}
				if r.json {
					return writeJSON(r.out, st)
				}
				fmt.Fprintf(r.out, "%s Session %s ended (%s); its cluster is deleted. `oplab lab status --session %s` still shows its results.\n",
					r.s.ok("✓"), st.ID, st.State, st.ID)
				return nil
			})
		},
	}
	f.add(cmd)
	return cmd
}

// notYet says that a check failed, in the words of its exercise.
func notYet(res *session.CheckResult) string {
	if a := res.Status.Attempt; a != nil && !a.T0.IsZero() {
		return "not recovered yet"
	}
	return "not done yet"
}
