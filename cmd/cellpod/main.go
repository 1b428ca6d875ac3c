// Command cellpod is the main process of a learner's control-plane pod on
// the pods provider (see package cellpod):
//
//	cellpod run -name NAME [-data /var/lib/oplab] [-bin /usr/local/bin] [-listen 0.0.0.0:6443]
//	cellpod kubeconfig -name NAME [-data /var/lib/oplab]
//	cellpod operator -name NAME [-data /var/lib/oplab] [-dir /var/lib/oplab/operator]
//	cellpod console -name NAME [-data /var/lib/oplab] [-bin /usr/local/bin] -- -limit D -stdin N -- KUBECTL-ARGS...
//	cellpod idle
//
// "run" makes the cluster in the pod's volume, or starts it again from
// there, and serves its API server on -listen until SIGTERM; "kubeconfig"
// prints the cluster's admin kubeconfig; "operator" plays the reference
// operator's pod in the cell once the learner's cluster has its chart;
// "console" runs one command of the learner's web console against the
// cell's API server (the first N bytes of stdin its input, stopped when
// stdin ends), and "idle" holds the console container open for it.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"oplab.dev/oplab/internal/cluster/cellpod"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	if len(os.Args) > 1 && os.Args[1] == "console" {
		code := consoleCommand(ctx, os.Args[2:])
		stop()
		os.Exit(code)
	}
	err := run(ctx, os.Args[1:])
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "cellpod:", err)
		os.Exit(1)
	}
}

const usage = "usage: cellpod run|kubeconfig|operator|console -name NAME [-data DIR] [-bin DIR] [-listen ADDR] [-dir DIR], or cellpod idle"

func run(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return fmt.Errorf(usage)
	}
	if args[0] == "idle" {
		return cellpod.Idle(ctx)
	}
	o, rest, err := options(args)
	if err != nil {
		return err
	}
	if len(rest) != 0 {
		return fmt.Errorf(usage)
	}
	switch args[0] {
	case "run":
		return cellpod.Run(ctx, o)
	case "kubeconfig":
		return cellpod.Kubeconfig(o, os.Stdout)
	case "operator":
		return cellpod.Operator(ctx, o)
	default:
		return fmt.Errorf("unknown command %q; %s", args[0], usage)
	}
}

// consoleCommand is "cellpod console": its exit status is kubectl's.
func consoleCommand(ctx context.Context, args []string) int {
	o, rest, err := options(append([]string{"console"}, args...))
	if err != nil {
		fmt.Fprintln(os.Stderr, "cellpod:", err)
		return 125
	}
	return cellpod.Console(ctx, o, rest, os.Stdin, os.Stdout, os.Stderr)
}

// options reads the flags every command shares; rest is what follows them.
func options(args []string) (o cellpod.Options, rest []string, err error) {
	fs := flag.NewFlagSet("cellpod "+args[0], flag.ContinueOnError)
	fs.StringVar(&o.Name, "name", "", "the cluster's name")
	fs.StringVar(&o.DataDir, "data", "/var/lib/oplab", "the pod's volume, where the cluster's state lives")
	fs.StringVar(&o.BinDir, "bin", "/usr/local/bin", "where etcd and kube-controlplane are")
	fs.StringVar(&o.Listen, "listen", "0.0.0.0:6443", "the pod's API port")
	fs.StringVar(&o.OperatorDir, "dir", "/var/lib/oplab/operator", "the operator's directory (token, kubeconfig, logs)")
	if err := fs.Parse(args[1:]); err != nil {
		return o, nil, err
	}
	if o.Name == "" {
		return o, nil, fmt.Errorf(usage)
	}
	return o, fs.Args(), nil
}
