package bwrap

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"oplab.dev/oplab/internal/walltest"
)

// TestStagedPathsAreNamed: every host path Args names through Source is
// one of Paths, and no other is: "cell hold" stages Paths, and a path bwrap
// was told that was not staged is a path it cannot reach (cell.Staging
// panics on one). Tried binds are the host's public paths, named as they
// are.
func TestStagedPathsAreNamed(t *testing.T) {
	sb := Sandbox{
		Hostname: "box",
		Tmp:      "/data/c/tmp",
		Binds: []Bind{
			{Src: "/data/c", Writable: true},
			{Src: "/bin/prog", Dst: "/opt/prog"},
			{Src: "/etc/resolv.conf", Try: true},
		},
		Etc: "/data/c/run/etc",
	}
	var named []string
	sb.Source = func(p string) string {
		named = append(named, p)
		return "/staged" + p
	}
	args := sb.Args("/opt/prog", "a")
	if got, want := slices.Sorted(slices.Values(named)), slices.Sorted(slices.Values(sb.Paths())); !slices.Equal(got, want) {
		t.Errorf("paths named through Source: got %q, want Paths %q", got, want)
	}
	line := strings.Join(args, " ")
	for _, want := range []string{
		"--bind /staged/data/c/tmp /tmp",
		"--bind /staged/data/c /data/c",
		"--ro-bind /staged/bin/prog /opt/prog",
		"--ro-bind-try /etc/resolv.conf /etc/resolv.conf",
		"--ro-bind /staged/data/c/run/etc/passwd /etc/passwd",
		"-- /opt/prog a",
	} {
		if !strings.Contains(line, want) {
			t.Errorf("args %q lack %q", line, want)
		}
	}
	// /tmp first: a bind inside it (a cell's directory under /tmp) would
	// otherwise be hidden by it.
	if tmp, dir := strings.Index(line, " /tmp "), strings.Index(line, " /data/c "); tmp < 0 || dir < 0 || tmp > dir {
		t.Errorf("args %q: want /tmp bound before /data/c", line)
	}
	if strings.Contains(line, "--unshare-net") || strings.Contains(line, "--info-fd") {
		t.Errorf("args %q: want neither a network of its own nor an info fd, not asked for", line)
	}
}

// TestEtc: the sandbox's user is UID and GID by the name given, and names
// go to the DNS only when asked.
func TestEtc(t *testing.T) {
	for _, tt := range []struct {
		etc              Etc
		passwd, nsswitch string
	}{
		{Etc{User: "cell"}, "cell:x:65534:65534:cell:/nonexistent:/nonexistent\n", "hosts: files\n"},
		{Etc{User: "console", Home: "/console", DNS: true}, "console:x:65534:65534:console:/console:/nonexistent\n", "hosts: files dns\n"},
	} {
		dir := t.TempDir()
		if err := WriteEtc(dir, tt.etc); err != nil {
			t.Fatal(err)
		}
		for name, want := range map[string]string{"passwd": tt.passwd, "nsswitch.conf": tt.nsswitch, "group": tt.etc.User + ":x:65534:\n"} {
			b, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(string(b), want) {
				t.Errorf("%+v: /etc/%s is %q, want it to start %q", tt.etc, name, b, want)
			}
		}
		if got := (Sandbox{Etc: dir}).Paths(); len(got) != len(etcNames) {
			t.Errorf("Paths of a sandbox with only /etc: got %q, want its %d files", got, len(etcNames))
		}
	}
}

// probeEnv, when set, makes the test binary a probe that says where it
// runs (TestSandboxRuns).
const probeEnv = "OPLAB_BWRAP_PROBE"

func TestMain(m *testing.M) {
	if os.Getenv(probeEnv) != "" {
		host, _ := os.Hostname()
		ifaces, _ := net.Interfaces()
		var names []string
		for _, i := range ifaces {
			names = append(names, i.Name)
		}
		_, etcErr := os.Stat("/etc/shadow")
		fmt.Printf("uid=%d gid=%d host=%s ifaces=%s shadow=%v\n", os.Getuid(), os.Getgid(), host, strings.Join(names, ","), etcErr == nil)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestSandboxRuns runs this test binary in a sandbox made from Args, with
// a network of its own, and asks it where it is: the sandbox's user, its
// hostname, only a loopback interface, none of the host's /etc. Probe says
// the same sandbox works, and a program that fails in it does not.
func TestSandboxRuns(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	etc := t.TempDir()
	if err := WriteEtc(etc, Etc{User: "probe"}); err != nil {
		t.Fatal(err)
	}
	sb := Sandbox{Hostname: "probebox", Net: true, Binds: []Bind{{Src: self, Dst: "/probe"}}, Etc: etc, System: Dynamic(self), Chdir: "/"}
	path, err := Path()
	walltest.Require(t, walltest.Sandbox, err) // scripts/ensure-bwrap.sh installs it
	command := func(prog string) func(context.Context) *exec.Cmd {
		return func(ctx context.Context) *exec.Cmd {
			c := exec.CommandContext(ctx, path, sb.Args(prog)...)
			c.Env = []string{probeEnv + "=1"}
			return c
		}
	}
	walltest.Require(t, walltest.Sandbox, Probe(context.Background(), "the probe", command("/probe")))
	out, err := command("/probe")(context.Background()).Output()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.TrimSpace(string(out)), "uid=65534 gid=65534 host=probebox ifaces=lo shadow=false"; got != want {
		t.Errorf("the probe in the sandbox said %q, want %q", got, want)
	}
	if err := Probe(context.Background(), "a missing program", command("/missing")); err == nil || !strings.Contains(err.Error(), "a missing program") {
		t.Errorf("Probe of a program the sandbox does not hold: got %v, want an error naming it", err)
	}
}
