// Package cli is the oplab command: the server and the offline CLI in one
// binary. Run is the whole program; cmd/oplab only calls Main.
package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"oplab.dev/oplab/internal/app"
)

// Streams are the program's standard streams.
type Streams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
}

// globals are the settings every command shares: the configuration
// (flags and environment, see config) and --verbose.
type globals struct {
	config
	verbose bool
	streams Streams
}

// Main runs oplab with the process's arguments and returns its exit code.
func Main() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	streams := Streams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
	if err := Run(ctx, streams, os.Args[1:]); err != nil {
		fmt.Fprintln(streams.ErrOut, "error:", err)
		return 1
	}
	return 0
}

// Run executes the oplab command line args.
func Run(ctx context.Context, streams Streams, args []string) error {
	root := newRoot(&globals{streams: streams}, processEnv)
	root.SetArgs(args)
	root.SetIn(streams.In)
	root.SetOut(streams.Out)
	root.SetErr(streams.ErrOut)
	return root.ExecuteContext(ctx)
}

// newRoot builds the command tree on g, its configuration read from env.
func newRoot(g *globals, env lookupEnv) *cobra.Command {
	root := &cobra.Command{
		Use:   "oplab",
		Short: "A hands-on lab server for learning the Kubernetes Operator pattern",
		Long: `oplab gives every learner a Kubernetes cluster of their own with a reference
PostgreSQL operator in it, and lessons, chaos exercises and quizzes around it.

Run "oplab serve" for the web server, or use the commands below offline.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	g.load(root, env)
	root.PersistentFlags().BoolVarP(&g.verbose, "verbose", "v", false, "log what happens underneath")
	// Every command's help ends with the variables it reads.
	help := root.HelpFunc()
	root.SetHelpFunc(func(cmd *cobra.Command, args []string) {
		help(cmd, args)
		fmt.Fprint(cmd.OutOrStdout(), envHelp(cmd))
	})
	root.AddCommand(
		newClassCmd(g),
		newClusterCmd(g),
		newLabCmd(g),
		newInstructorCmd(g),
		newLogsCmd(g),
		newOperatorCmd(g),
		newQuizCmd(g),
		newServeCmd(g),
		newVersionCmd(),
	)
	return root
}

// logger writes to stderr when --verbose is given, and nowhere otherwise.
func (g *globals) logger() *slog.Logger {
	if !g.verbose {
		return slog.New(slog.DiscardHandler)
	}
	return slog.New(slog.NewTextHandler(g.streams.ErrOut, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// provider returns the cluster commands' layer on the provider the flags
// choose.
func (g *globals) provider() (*app.Clusters, error) {
	return app.OpenClusters(g.appConfig())
}
