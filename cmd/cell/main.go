// Command cell runs inside an embedded cluster's cell: "cell init" is the
// cell's first process, which forwards the host's connections to the
// cluster's ports; "cell exec" sets a process's limits before it runs the
// program. See package cell.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"oplab.dev/oplab/internal/cell"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	err := cell.Main(ctx, os.Args[1:], os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "cell:", err)
		os.Exit(1)
	}
}
