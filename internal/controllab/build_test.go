package controllab_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"oplab.dev/oplab/internal/cluster"
	"oplab.dev/oplab/internal/cluster/clustertest"
	"oplab.dev/oplab/internal/controllab"
	"oplab.dev/oplab/internal/walltest"
	"oplab.dev/oplab/labs"
)

// kit returns the build kit of the test's bin directory; make test makes
// it first (make kit), and a missing kit fails the test.
func kit(t *testing.T) controllab.Kit {
	t.Helper()
	k, err := controllab.FindKit(clustertest.BinDir(t))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// scaffold is the write-reconciler lab's module as a learner gets it.
func scaffold(t *testing.T, k controllab.Kit) controllab.Files {
	t.Helper()
	dir := t.TempDir()
	fsys, err := labs.Module("write-reconciler")
	if err != nil {
		t.Fatal(err)
	}
	if err := controllab.WriteModule(dir, fsys, k); err != nil {
		t.Fatal(err)
	}
	if err := controllab.WriteModule(dir, fsys, k); err == nil {
		t.Error("WriteModule wrote over a module: want it refused")
	}
	f, err := controllab.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestBuildInTheCell: the learner's module builds in their cluster's cell
// from the warm kit; a line they break is reported on that line, and the
// last good program stays; fixed, it builds again.
func TestBuildInTheCell(t *testing.T) {
	k := kit(t)
	c := clustertest.New(t)
	ctx := t.Context()
	files := scaffold(t, k)
	b := controllab.Builder{Kit: k, Cells: c.Provider, Cluster: c.Name}

	res, err := b.Build(ctx, files)
	if err != nil {
		t.Fatal(err)
	}
	if !res.OK {
		t.Fatalf("the scaffold does not build:\n%s", res.Output)
	}
	t.Logf("the scaffold built in %s (cold cell cache, warm kit)", res.Took.Round(time.Millisecond))
	prog := res.Binary
	first, err := os.Stat(prog)
	if err != nil {
		t.Fatal(err)
	}

	const file = "internal/controller/webapp_controller.go"
	good := files[file]
	lines := strings.Split(string(good), "\n")
	at := -1
	for i, l := range lines {
		if strings.Contains(l, "func (r *WebAppReconciler) Reconcile(") {
			at = i + 1 // the first line of its body
			break
		}
	}
	if at < 0 {
		t.Fatalf("%s has no Reconcile", file)
	}
	lines = append(lines[:at+1], lines[at:]...)
	lines[at] = "\tundefinedThing := notDeclared"
	files[file] = []byte(strings.Join(lines, "\n"))
	res, err = b.Build(ctx, files)
	if err != nil {
		t.Fatal(err)
	}
	if res.OK {
		t.Fatal("a module that uses an undeclared name built")
	}
	found := false
	for _, e := range res.Errors {
		t.Logf("compile error: %s", e)
		if e.File == file && e.Line == at+1 && strings.Contains(e.Msg, "notDeclared") {
			found = true
		}
	}
	if !found {
		t.Errorf("no error on %s:%d naming notDeclared; output:\n%s", file, at+1, res.Output)
	}
	if res.Binary != "" {
		t.Errorf("a failed build names a program: %q", res.Binary)
	}
	if now, err := os.Stat(prog); err != nil || !os.SameFile(now, first) {
		t.Errorf("a failed build replaced the last good program (%v)", err)
	}

	files[file] = good
	res, err = b.Build(ctx, files)
	if err != nil || !res.OK {
		t.Fatalf("fixed: %v %+v", err, res)
	}
	t.Logf("an edit built in %s (warm cell cache)", res.Took.Round(time.Millisecond))
	// The builds ran within the cluster's budget, beside its cluster.
	u, err := c.Provider.Usage(ctx, c.Name)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the cell's memory: peak %d MiB of %d", u.MemoryPeak>>20, u.MemoryLimit>>20)
	if u.OOMKills > 0 || len(u.Down) > 0 {
		t.Errorf("building in the cell cost the cluster: %d processes killed at its memory ceiling, down: %v", u.OOMKills, u.Down)
	}
}

// escapeMain is a learner's program that tries to reach what is not
// theirs from where their build and their controller run, and prints
// what it could do as JSON.
const escapeMain = `package main

import (
	"encoding/json"
	"net"
	"os"
	"time"
)

func main() {
	got := map[string]string{}
	for _, f := range os.Args[1:] {
		if b, err := os.ReadFile(f); err == nil {
			got["read "+f] = string(b)
		}
		os.WriteFile(f, []byte("written by a learner"), 0o644)
	}
	if c, err := net.DialTimeout("tcp", "127.0.0.1:"+os.Getenv("CANARY_PORT"), 2*time.Second); err == nil {
		c.Close()
		got["dial the canary port"] = "yes"
	}
	json.NewEncoder(os.Stdout).Encode(got)
}
`

// TestBuildAndProgramAreContained: a learner's module and the program it
// builds run in their cell: neither reads or writes the host's files
// (another learner's kubeconfig, the data directory, /tmp, /etc/shadow),
// changes the build kit, or reaches a port of the host.
func TestBuildAndProgramAreContained(t *testing.T) {
	k := kit(t)
	p, data := clustertest.NewProvider(t)
	walltest.Require(t, walltest.Cell, walltest.Contained(p.Contained()))
	canaries := clustertest.PlantCanaries(t, data)
	c := clustertest.Create(t, p, data, clustertest.UniqueName("esc"))
	ctx := t.Context()

	files := scaffold(t, k)
	for name := range files {
		if strings.HasSuffix(name, ".go") {
			delete(files, name)
		}
	}
	files["main.go"] = []byte(escapeMain)
	u0, err := p.Usage(ctx, c.Name)
	if err != nil {
		t.Fatal(err)
	}
	b := controllab.Builder{Kit: k, Cells: p, Cluster: c.Name}
	res, err := b.Build(ctx, files)
	if err != nil {
		t.Fatal(err)
	}
	if !res.OK {
		t.Fatalf("the escape program does not build:\n%s", res.Output)
	}
	ws, err := p.Workspace(ctx, c.Name)
	if err != nil {
		t.Fatal(err)
	}
	// What a learner's program runs as: confined in the cell, seeing its
	// program and a /tmp of the workspace's.
	confined := func(binds cluster.Sandbox, args ...string) (string, error) {
		t.Helper()
		binds.ReadOnly = append(binds.ReadOnly, res.Binary)
		binds.Tmp = filepath.Join(ws, "tmp")
		path, argv, err := p.Confine(ctx, c.Name, binds, res.Binary, args)
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		_, err = p.Run(ctx, c.Name, cluster.Command{
			Path: path, Args: argv,
			Env:    []string{"CANARY_PORT=" + fmt.Sprint(canaries.Port)},
			Stdout: &out, Stderr: &out,
		})
		return out.String(), err
	}
	kitFile := filepath.Join(k.Cache(), "README")
	before, _ := os.ReadFile(kitFile)
	// The host's files; the cluster's own credentials, keys and state,
	// which its controller must not hold; the build kit.
	clusterDir := filepath.Dir(c.Kubeconfig)
	targets := []string{canaries.File, canaries.Kubeconfig, canaries.TmpFile, "/etc/shadow",
		c.Kubeconfig, filepath.Join(clusterDir, "pki", "ca.key"), filepath.Join(clusterDir, "state.json"),
		kitFile, k.Go()}
	// What the host holds there now, to tell a read and a write of the
	// real file from the sandbox's own: bwrap makes the parents of its
	// binds, so a path of the cluster's may exist, empty, in the sandbox.
	held := map[string][]byte{}
	for _, f := range targets {
		held[f], _ = os.ReadFile(f)
	}
	out, err := confined(cluster.Sandbox{}, targets...)
	if err != nil {
		t.Fatalf("run the escape program: %v\n%s", err, out)
	}
	var got map[string]string
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("the escape program's report: %v\n%s", err, out)
	}
	for what, v := range got {
		f, isRead := strings.CutPrefix(what, "read ")
		if isRead && (len(held[f]) == 0 || v != string(held[f])) {
			continue // a file of its own sandbox
		}
		t.Errorf("the learner's program could %s (%.40q)", what, v)
	}
	for _, f := range targets {
		if now, _ := os.ReadFile(f); !bytes.Equal(now, held[f]) {
			t.Errorf("the learner's program changed %s", f)
		}
	}
	if touched := canaries.Touched(); len(touched) > 0 {
		t.Errorf("canaries touched: %v", touched)
	}
	if after, _ := os.ReadFile(kitFile); !bytes.Equal(before, after) {
		t.Error("the build kit's cache changed")
	}

	// The learner's build cache links the kit's files: still the host's,
	// read-only, and not counted against the learner's disk.
	readme := filepath.Join(ws, "gocache", "README")
	out, err = confined(cluster.Sandbox{Writable: []string{filepath.Join(ws, "gocache")}}, filepath.Join(ws, "x", "y"), readme)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "read "+readme) {
		t.Errorf("the learner's program cannot read its own build cache: %s", out)
	}
	if strings.Contains(out, "wrote "+readme) {
		t.Errorf("the learner's program wrote a file of the kit's cache through its link: %s", out)
	}
	if after, _ := os.ReadFile(kitFile); !bytes.Equal(before, after) {
		t.Error("writing the learner's build cache changed the kit's")
	}
	u, err := p.Usage(ctx, c.Name)
	if err != nil {
		t.Fatal(err)
	}
	var shared int64
	filepath.Walk(k.Cache(), func(_ string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			shared += fi.Size()
		}
		return nil
	})
	grew := int64(u.Disk) - int64(u0.Disk)
	t.Logf("the cluster's disk grew by %d MiB with its build; the kit's cache: %d MiB", grew>>20, shared>>20)
	if os.Geteuid() == 0 && grew > shared/2 {
		t.Errorf("the build charged the cluster %d MiB of disk: the shared build cache (%d MiB) counts as its own", grew>>20, shared>>20)
	}
}
