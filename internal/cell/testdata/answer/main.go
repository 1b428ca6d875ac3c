// Command answer listens on 127.0.0.1:PORT and tells every connection who
// it runs as: a stand-in for a cluster's server in the cell package's tests.
package main

import (
	"fmt"
	"net"
	"os"
)

func main() {
	l, err := net.Listen("tcp", "127.0.0.1:"+os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		fmt.Fprintf(c, "in the cell as %d\n", os.Getuid())
		c.Close()
	}
}
