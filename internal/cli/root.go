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
	"path/filepath"
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

// globals are the flags every command shares.
type globals struct {
	dataDir      string
	binDir       string
	providerName string
	store        string
	verbose      bool
	streams      Streams
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
	root := newRoot(streams)
	root.SetArgs(args)
	root.SetIn(streams.In)
	root.SetOut(streams.Out)
	root.SetErr(streams.ErrOut)
	return root.ExecuteContext(ctx)
}

func newRoot(streams Streams) *cobra.Command {
	g := &globals{streams: streams}
	root := &cobra.Command{
		Use:   "oplab",
		Short: "A hands-on lab server for learning the Kubernetes Operator pattern",
		Long: `oplab gives every learner a Kubernetes cluster of their own with a reference
PostgreSQL operator in it, and lessons, chaos exercises and quizzes around it.

Run "oplab serve" for the web server, or use the commands below offline.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	f := root.PersistentFlags()
	f.StringVar(&g.dataDir, "data-dir", defaultDataDir(), "where clusters and state are kept (env OPLAB_DATA)")
	f.StringVar(&g.binDir, "bin-dir", defaultBinDir(), "where the control-plane binaries are (env OPLAB_BIN)")
	f.StringVar(&g.providerName, "provider", app.DefaultProviderName(), "cluster provider: embedded, kind or pods (env OPLAB_PROVIDER; pods reads OPLAB_PODS_KUBECONFIG, OPLAB_PODS_NAMESPACE, OPLAB_PODS_IMAGE)")
	// No default shown: the URL may hold a password.
	f.StringVar(&g.store, "store", "", "a postgres:// URL of a PostgreSQL store that several servers share; the SQLite file in the data directory when empty (env OPLAB_STORE_URL)")
	f.BoolVarP(&g.verbose, "verbose", "v", false, "log what happens underneath")
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
	return app.OpenClusters(g.config())
}

// defaultDataDir is $OPLAB_DATA, else $XDG_DATA_HOME/oplab, else
// ~/.local/share/oplab.
func defaultDataDir() string {
	if d := os.Getenv("OPLAB_DATA"); d != "" {
		return d
	}
	if d := os.Getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "oplab")
	}
	if h, err := os.UserHomeDir(); err == nil {
		return filepath.Join(h, ".local", "share", "oplab")
	}
	return filepath.Join(os.TempDir(), "oplab")
}

// defaultBinDir is $OPLAB_BIN, else the directory of the oplab executable,
// where `make` puts the control-plane binaries beside it.
func defaultBinDir() string {
	if d := os.Getenv("OPLAB_BIN"); d != "" {
		return d
	}
	exe, err := os.Executable()
	if err != nil {
		return "bin"
	}
	if real, err := filepath.EvalSymlinks(exe); err == nil {
		exe = real
	}
	return filepath.Dir(exe)
}
