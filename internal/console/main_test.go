package console

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"oplab.dev/oplab/internal/cluster/clustertest"
)

// probeEnv, when set, makes the test binary a probe run inside the sandbox
// (see TestSandboxHidesServerFiles) instead of running the tests.
const probeEnv = "OPLAB_CONSOLE_PROBE_SECRET"

func TestMain(m *testing.M) {
	if secret := os.Getenv(probeEnv); secret != "" {
		os.Exit(probe(secret))
	}
	if filepath.Base(os.Args[0]) == "kubectl" {
		os.Exit(probeKubectl())
	}
	if kc := os.Getenv(serveEnv); kc != "" {
		os.Exit(serveCall(kc))
	}
	os.Exit(clustertest.Main(m))
}

// probeKubectl is this test binary copied as kubectl (see
// TestEveryPathSandboxed): whatever it is asked, it answers as kubectl get
// -o name would, with one object named after where it runs: its home
// directory's name and its user id.
//
// Asked "get hostuid", it waits a few seconds first, for the test to read
// from the host which user it runs as.
func probeKubectl() int {
	if len(os.Args) > 2 && os.Args[1] == "get" && os.Args[2] == "hostuid" {
		time.Sleep(3 * time.Second)
	}
	fmt.Printf("pod/%s-uid%d\n", filepath.Base(os.Getenv("HOME")), os.Getuid())
	return 0
}

// probe reports what a process in the sandbox can read: the file at
// secret (a host path outside its directory), its own kubeconfig, and the
// entries of its root.
func probe(secret string) int {
	if _, err := os.ReadFile(secret); err != nil {
		fmt.Println("secret: unreadable")
	} else {
		fmt.Println("secret: READ")
	}
	if _, err := os.ReadFile(boxHome + "/kubeconfig"); err != nil {
		fmt.Println("kubeconfig:", err)
	} else {
		fmt.Println("kubeconfig: ok")
	}
	entries, _ := os.ReadDir("/")
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	fmt.Println("root:", strings.Join(names, " "))
	fmt.Println("uid:", os.Getuid())
	return 0
}
