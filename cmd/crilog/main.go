// Command crilog runs a program and writes its stdout and stderr to a file in
// the CRI log format, so that KWOK can serve the file as a simulated pod's log.
//
//	crilog -file /path/to/pod.log -- program [args...]
//
// oplab starts the operator through it on the embedded provider.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"oplab.dev/oplab/internal/operator/crilog"
)

func main() {
	fs := flag.NewFlagSet("crilog", flag.ExitOnError)
	file := fs.String("file", "", "log file to append CRI log lines to")
	_ = fs.Parse(os.Args[1:])
	if *file == "" || fs.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: crilog -file PATH -- program [args...]")
		os.Exit(2)
	}
	code, err := crilog.Run(context.Background(), *file, fs.Args())
	if err != nil {
		fmt.Fprintln(os.Stderr, "crilog:", err)
	}
	os.Exit(code)
}
