// Command oplab is the oplab lab server and its offline CLI.
package main

import (
	"os"

	"oplab.dev/oplab/internal/cli"
)

func main() { os.Exit(cli.Main()) }
