// Command hostpod runs a program on the host in step with a simulated pod,
// as a kubelet runs a container, and writes the program's output in the CRI
// log format to the file KWOK serves as the pod's log. See package hostpod.
//
//	hostpod -kubeconfig ADMIN -namespace NS -selector SEL -log FILE [-previous-log FILE] -- program [args...]
//
// oplab runs the operator through it on the embedded provider.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"oplab.dev/oplab/internal/operator/hostpod"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	err := run(ctx, os.Args[1:])
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "hostpod:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("hostpod", flag.ContinueOnError)
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig to watch the pods with")
	namespace := fs.String("namespace", "", "namespace of the pod")
	selector := fs.String("selector", "", "label selector of the pod")
	logPath := fs.String("log", "", "file to write the program's output to, as CRI log lines")
	previous := fs.String("previous-log", "", "where the last run's log is moved at each start")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *kubeconfig == "" || *namespace == "" || *selector == "" || *logPath == "" || fs.NArg() == 0 {
		return fmt.Errorf("usage: hostpod -kubeconfig F -namespace NS -selector SEL -log F [-previous-log F] -- program [args...]")
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	return hostpod.Run(ctx, hostpod.Options{
		Client:          cs,
		Namespace:       *namespace,
		Selector:        *selector,
		Argv:            fs.Args(),
		Env:             os.Environ(),
		LogPath:         *logPath,
		PreviousLogPath: *previous,
		Logger:          slog.New(slog.NewTextHandler(os.Stderr, nil)),
	})
}
