package instance

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// This file runs real PostgreSQL servers for the tests: a primary made with
// initdb and streaming replicas made with pg_basebackup -R, each on a free
// port on 127.0.0.1 under the test's temporary directory.

const (
	testPGUser     = "postgres"
	testPGPassword = "oplab-test-secret"
)

// pgBinaries are the directory holding PostgreSQL's server programs and, when
// the test runs as root, the unprivileged account that runs them (PostgreSQL
// refuses to run as root).
type pgBinaries struct {
	dir  string
	cred *syscall.Credential
	uid  int
	gid  int
}

// ensureOnce runs scripts/ensure-postgres.sh at most once per test binary.
var ensureOnce = sync.OnceValues(func() ([]byte, error) {
	dir, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	for ; ; dir = filepath.Dir(dir) {
		script := filepath.Join(dir, "scripts", "ensure-postgres.sh")
		if _, err := os.Stat(script); err == nil {
			return exec.Command(script).CombinedOutput()
		}
		if filepath.Dir(dir) == dir {
			return nil, errors.New("scripts/ensure-postgres.sh not found above the test's directory")
		}
	}
})

// findPGBinaries looks for initdb, pg_ctl, pg_basebackup and postgres beside
// pg_ctl in PATH, then under /usr/lib/postgresql/*/bin (newest first). When
// none are found it runs scripts/ensure-postgres.sh (as `make test` does
// first), which installs Debian's postgresql package, and looks again.
func findPGBinaries(t *testing.T) pgBinaries {
	t.Helper()
	// The inner loop (make test-short) installs nothing and starts no
	// database servers.
	if testing.Short() {
		t.Skip("needs real PostgreSQL servers; -short")
	}
	if b, ok := lookPGBinaries(t); ok {
		return b
	}
	out, err := ensureOnce()
	if b, ok := lookPGBinaries(t); ok {
		return b
	}
	t.Fatalf("PostgreSQL server programs (initdb, pg_ctl, pg_basebackup, postgres) not found in PATH or /usr/lib/postgresql/*/bin, and scripts/ensure-postgres.sh could not install them (%v):\n%s", err, out)
	return pgBinaries{}
}

func lookPGBinaries(t *testing.T) (pgBinaries, bool) {
	t.Helper()
	var dirs []string
	if p, err := exec.LookPath("pg_ctl"); err == nil {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			dirs = append(dirs, filepath.Dir(r))
		}
		dirs = append(dirs, filepath.Dir(p))
	}
	debian, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(debian, func(i, j int) bool { return pgMajor(debian[i]) > pgMajor(debian[j]) })
	dirs = append(dirs, debian...)
	for _, d := range dirs {
		if hasPGPrograms(d) {
			b := pgBinaries{dir: d, uid: -1, gid: -1}
			if os.Geteuid() == 0 {
				b.runAsUnprivileged(t)
			}
			return b, true
		}
	}
	return pgBinaries{}, false
}

func pgMajor(dir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(dir)))
	return n
}

func hasPGPrograms(dir string) bool {
	for _, p := range []string{"initdb", "pg_ctl", "pg_basebackup", "postgres"} {
		fi, err := os.Stat(filepath.Join(dir, p))
		if err != nil || fi.Mode()&0o111 == 0 {
			return false
		}
	}
	return true
}

// runAsUnprivileged picks the postgres account (made by Debian's package) or
// creates a system account to run the servers.
func (b *pgBinaries) runAsUnprivileged(t *testing.T) {
	t.Helper()
	u, err := user.Lookup("postgres")
	if err != nil {
		u, err = user.Lookup("oplab-pg")
	}
	if err != nil {
		out, uerr := exec.Command("useradd", "--system", "--user-group", "--no-create-home", "--shell", "/usr/sbin/nologin", "oplab-pg").CombinedOutput()
		if uerr != nil {
			t.Fatalf("running as root and no postgres account exists; useradd oplab-pg: %v: %s", uerr, out)
		}
		if u, err = user.Lookup("oplab-pg"); err != nil {
			t.Fatalf("look up oplab-pg after useradd: %v", err)
		}
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	b.uid, b.gid = uid, gid
	b.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
}

// command prepares a PostgreSQL program to run as the account that owns the
// servers.
func (b pgBinaries) command(ctx context.Context, dir string, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, filepath.Join(b.dir, name), args...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + b.dir + ":/usr/bin:/bin", "LC_ALL=C", "PGPASSWORD=" + testPGPassword}
	if b.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: b.cred}
	}
	return cmd
}

func (b pgBinaries) run(t *testing.T, dir, name string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	var out bytes.Buffer
	cmd := b.command(ctx, dir, name, args...)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out.String())
	}
}

// workDir returns a directory under t.TempDir() that the server account can
// write, making the directories above it traversable for that account.
func (b pgBinaries) workDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if b.cred == nil {
		return dir
	}
	for d := dir; d != os.TempDir() && d != "/" && d != "."; d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o711); err != nil {
			t.Fatalf("make %s traversable for the postgres account: %v", d, err)
		}
		if strings.HasPrefix(filepath.Base(d), "Test") {
			break
		}
	}
	if err := os.Chown(dir, b.uid, b.gid); err != nil {
		t.Fatalf("give %s to the postgres account: %v", dir, err)
	}
	return dir
}

// pgServer is one running PostgreSQL server.
type pgServer struct {
	name    string
	dataDir string
	port    int
	logFile string
	bins    pgBinaries
	stopped bool
}

func (s *pgServer) String() string { return fmt.Sprintf("%s (127.0.0.1:%d)", s.name, s.port) }

// startPrimary makes a new database cluster with initdb and starts it.
func startPrimary(t *testing.T, b pgBinaries, work string) *pgServer {
	t.Helper()
	s := &pgServer{name: "primary", dataDir: filepath.Join(work, "primary"), bins: b}
	pwfile := filepath.Join(work, "pwfile")
	if err := os.WriteFile(pwfile, []byte(testPGPassword+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if b.cred != nil {
		if err := os.Chown(pwfile, b.uid, b.gid); err != nil {
			t.Fatal(err)
		}
	}
	b.run(t, work, "initdb", "-D", s.dataDir, "-U", testPGUser, "--pwfile="+pwfile,
		"--auth-local=trust", "--auth-host=scram-sha-256", "--no-sync", "--no-instructions", "-E", "UTF8", "--locale=C")
	s.start(t)
	return s
}

// startReplica clones primary with pg_basebackup -R (which writes
// standby.signal and primary_conninfo) and starts it as a streaming standby.
func startReplica(t *testing.T, b pgBinaries, work, name string, primary *pgServer) *pgServer {
	t.Helper()
	s := &pgServer{name: name, dataDir: filepath.Join(work, name), bins: b}
	b.run(t, work, "pg_basebackup", "-h", "127.0.0.1", "-p", strconv.Itoa(primary.port), "-U", testPGUser,
		"-D", s.dataDir, "-R", "-X", "stream", "--checkpoint=fast", "--no-sync")
	s.start(t)
	return s
}

// start runs pg_ctl start on a free port, retrying once if another process
// took the port in between.
func (s *pgServer) start(t *testing.T) {
	t.Helper()
	s.logFile = filepath.Join(filepath.Dir(s.dataDir), s.name+".log")
	var lastErr error
	for range 3 {
		s.port = freePort(t)
		opts := fmt.Sprintf("-c listen_addresses=127.0.0.1 -c port=%d -c unix_socket_directories='' -c fsync=off -c wal_sender_timeout=5s -c wal_receiver_status_interval=1s", s.port)
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		cmd := s.bins.command(ctx, filepath.Dir(s.dataDir), "pg_ctl", "start", "-w", "-t", "50", "-D", s.dataDir, "-l", s.logFile, "-o", opts)
		out, err := cmd.CombinedOutput()
		cancel()
		if err == nil {
			t.Cleanup(func() { s.stop(t) })
			return
		}
		lastErr = fmt.Errorf("%w: %s\nserver log:\n%s", err, out, s.log())
	}
	t.Fatalf("start %s: %v", s, lastErr)
}

// stop shuts the server down (fast mode) and waits for it; stopping a
// stopped server does nothing.
func (s *pgServer) stop(t *testing.T) {
	if s.stopped {
		return
	}
	s.stopped = true
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := s.bins.command(ctx, filepath.Dir(s.dataDir), "pg_ctl", "stop", "-w", "-m", "fast", "-D", s.dataDir)
	if out, err := cmd.CombinedOutput(); err != nil && !strings.Contains(string(out), "is the server running") {
		t.Errorf("stop %s: %v: %s", s, err, out)
	}
}

func (s *pgServer) log() string {
	b, _ := os.ReadFile(s.logFile)
	return string(b)
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("find a free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
