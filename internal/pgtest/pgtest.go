// Package pgtest runs the real PostgreSQL server that tests of oplab's
// PostgreSQL store use: one per test binary, made with initdb on a free port
// on 127.0.0.1 in a temporary directory, started by the first test that
// needs it and stopped by the test binary's TestMain (Stop). Each test gets
// a database of its own on it (Fresh), which costs a tenth of a second where
// a server of its own (initdb) costs seconds. The way of finding and running
// PostgreSQL's programs is the one of
// internal/operator/instance/sql_server_test.go.
package pgtest

import (
	"context"
	"database/sql"
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
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	// The "pgx" database/sql driver.
	_ "github.com/jackc/pgx/v5/stdlib"
)

const (
	testPGUser     = "postgres"
	testPGPassword = "oplab-store-test-secret"
)

// SkipShort is why tests that need PostgreSQL skip under -short.
const SkipShort = "needs a PostgreSQL server; -short"

// Stop stops the test binary's server, if a test started one, and removes
// its files: call it from TestMain after m.Run.
func Stop() error { return testPG.stop() }

// testPG is the test binary's PostgreSQL server.
var testPG sharedPG

type sharedPG struct {
	once sync.Once
	srv  *pgServer
	err  error
	dbs  atomic.Int64
}

// Fresh creates an empty database on the test binary's server and returns
// its connection string. It skips the test under -short.
func Fresh(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip(SkipShort)
	}
	testPG.once.Do(func() { testPG.srv, testPG.err = startPGServer() })
	if testPG.err != nil {
		t.Fatalf("start the PostgreSQL server for the tests: %v", testPG.err)
	}
	name := fmt.Sprintf("store_%d", testPG.dbs.Add(1))
	admin, err := sql.Open("pgx", testPG.srv.url("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	if _, err := admin.ExecContext(t.Context(), "CREATE DATABASE "+name); err != nil {
		t.Fatalf("create database %s: %v", name, err)
	}
	return testPG.srv.url(name)
}

// stop stops the server, if one was started, and removes its files.
func (p *sharedPG) stop() error {
	if p.srv == nil {
		return nil
	}
	err := p.srv.stop()
	if rerr := os.RemoveAll(p.srv.work); rerr != nil {
		err = errors.Join(err, rerr)
	}
	return err
}

// pgBinaries are the directory holding PostgreSQL's server programs and,
// when the test runs as root, the unprivileged account that runs them
// (PostgreSQL refuses to run as root).
type pgBinaries struct {
	dir  string
	cred *syscall.Credential
	uid  int
	gid  int
}

// findPGBinaries looks for initdb, pg_ctl and postgres beside pg_ctl in
// PATH, then under /usr/lib/postgresql/*/bin (newest first). When none
// are found it runs scripts/ensure-postgres.sh (as `make test` does
// first), which installs Debian's postgresql package, and looks again.
func findPGBinaries() (pgBinaries, error) {
	if b, ok, err := lookPGBinaries(); ok || err != nil {
		return b, err
	}
	out, err := ensurePostgres()
	if b, ok, lerr := lookPGBinaries(); ok || lerr != nil {
		return b, lerr
	}
	return pgBinaries{}, fmt.Errorf("PostgreSQL server programs (initdb, pg_ctl, postgres) not found in PATH or /usr/lib/postgresql/*/bin, and scripts/ensure-postgres.sh could not install them (%v):\n%s", err, out)
}

// ensurePostgres runs scripts/ensure-postgres.sh, found above the test's
// directory.
func ensurePostgres() ([]byte, error) {
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
}

func lookPGBinaries() (pgBinaries, bool, error) {
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
				if err := b.runAsUnprivileged(); err != nil {
					return b, false, err
				}
			}
			return b, true, nil
		}
	}
	return pgBinaries{}, false, nil
}

func pgMajor(dir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(dir)))
	return n
}

func hasPGPrograms(dir string) bool {
	for _, p := range []string{"initdb", "pg_ctl", "postgres"} {
		fi, err := os.Stat(filepath.Join(dir, p))
		if err != nil || fi.Mode()&0o111 == 0 {
			return false
		}
	}
	return true
}

// runAsUnprivileged picks the postgres account (made by Debian's package)
// or creates a system account to run the server.
func (b *pgBinaries) runAsUnprivileged() error {
	u, err := user.Lookup("postgres")
	if err != nil {
		u, err = user.Lookup("oplab-pg")
	}
	if err != nil {
		out, uerr := exec.Command("useradd", "--system", "--user-group", "--no-create-home", "--shell", "/usr/sbin/nologin", "oplab-pg").CombinedOutput()
		if uerr != nil {
			return fmt.Errorf("running as root and no postgres account exists; useradd oplab-pg: %v: %s", uerr, out)
		}
		if u, err = user.Lookup("oplab-pg"); err != nil {
			return fmt.Errorf("look up oplab-pg after useradd: %w", err)
		}
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	b.uid, b.gid = uid, gid
	b.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	return nil
}

// run runs a PostgreSQL program as the account that owns the server.
func (b pgBinaries) run(dir, name string, args ...string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(b.dir, name), args...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + b.dir + ":/usr/bin:/bin", "LC_ALL=C"}
	if b.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: b.cred}
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, out)
	}
	return nil
}

// pgServer is the running PostgreSQL server.
type pgServer struct {
	bins pgBinaries
	// work holds the data directory, the log and the password file.
	work    string
	dataDir string
	logFile string
	port    int
}

// startPGServer makes a database cluster with initdb in a new temporary
// directory and starts it.
func startPGServer() (*pgServer, error) {
	b, err := findPGBinaries()
	if err != nil {
		return nil, err
	}
	// The system's temporary directory, not $TMPDIR: a test binary's own
	// (clustertest.Main's) is private to root, and PostgreSQL runs as an
	// unprivileged user when the tests run as root.
	work, err := os.MkdirTemp("/tmp", "oplab-store-pg-")
	if err != nil {
		return nil, err
	}
	s := &pgServer{bins: b, work: work, dataDir: filepath.Join(work, "data"), logFile: filepath.Join(work, "server.log")}
	if err := s.initdb(); err != nil {
		os.RemoveAll(work)
		return nil, err
	}
	if err := s.start(); err != nil {
		os.RemoveAll(work)
		return nil, err
	}
	return s, nil
}

func (s *pgServer) initdb() error {
	pwfile := filepath.Join(s.work, "pwfile")
	if err := os.WriteFile(pwfile, []byte(testPGPassword+"\n"), 0o600); err != nil {
		return err
	}
	if s.bins.cred != nil {
		for _, p := range []string{s.work, pwfile} {
			if err := os.Chown(p, s.bins.uid, s.bins.gid); err != nil {
				return fmt.Errorf("give %s to the postgres account: %w", p, err)
			}
		}
	}
	return s.bins.run(s.work, "initdb", "-D", s.dataDir, "-U", testPGUser, "--pwfile="+pwfile,
		"--auth-local=trust", "--auth-host=scram-sha-256", "--no-sync", "--no-instructions", "-E", "UTF8", "--locale=C",
		// A default collation that orders text unlike SQLite ("ada"
		// before "Bob"), as a production database's often does, so the
		// tests see the store keep SQLite's order anyway.
		"--locale-provider=icu", "--icu-locale=en-US")
}

// start runs pg_ctl start on a free port, retrying if another process
// took the port in between.
func (s *pgServer) start() error {
	var err error
	for range 3 {
		if s.port, err = freePort(); err != nil {
			return err
		}
		opts := fmt.Sprintf("-c listen_addresses=127.0.0.1 -c port=%d -c unix_socket_directories='' -c fsync=off", s.port)
		if err = s.bins.run(s.work, "pg_ctl", "start", "-w", "-t", "50", "-D", s.dataDir, "-l", s.logFile, "-o", opts); err == nil {
			return nil
		}
	}
	log, _ := os.ReadFile(s.logFile)
	return fmt.Errorf("start PostgreSQL: %w\nserver log:\n%s", err, log)
}

// stop shuts the server down (fast mode) and waits for it.
func (s *pgServer) stop() error {
	return s.bins.run(s.work, "pg_ctl", "stop", "-w", "-m", "fast", "-D", s.dataDir)
}

// url is the connection string of database db on the server.
func (s *pgServer) url(db string) string {
	return fmt.Sprintf("postgres://%s:%s@127.0.0.1:%d/%s?sslmode=disable", testPGUser, testPGPassword, s.port, db)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
