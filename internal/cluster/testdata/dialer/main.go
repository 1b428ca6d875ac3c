// Command dialer is the kind tests' probe of a node's network wall.
//
//	dialer dial ADDR...   tries a TCP connection to each address and prints
//	                      one line each: "ADDR ok" or "ADDR failed: ERROR"
//	dialer listen ADDR    accepts connections at ADDR and closes them
//
// It is built static (CGO_ENABLED=0) so that it runs in any container: a
// pod whose root is the pause image, a node, a peer beside the nodes.
package main

import (
	"fmt"
	"net"
	"os"
	"time"
)

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: dialer dial ADDR... | dialer listen ADDR")
		os.Exit(2)
	}
	switch os.Args[1] {
	case "dial":
		for _, addr := range os.Args[2:] {
			c, err := net.DialTimeout("tcp", addr, 3*time.Second)
			if err != nil {
				fmt.Printf("%s failed: %v\n", addr, err)
				continue
			}
			c.Close()
			fmt.Printf("%s ok\n", addr)
		}
	case "listen":
		l, err := net.Listen("tcp", os.Args[2])
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		for {
			c, err := l.Accept()
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			c.Close()
		}
	default:
		fmt.Fprintf(os.Stderr, "dialer: unknown command %q\n", os.Args[1])
		os.Exit(2)
	}
}
