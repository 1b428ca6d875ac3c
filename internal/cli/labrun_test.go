package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"oplab.dev/oplab/internal/course"
	"oplab.dev/oplab/internal/quiz"
	"oplab.dev/oplab/internal/session"
)

// labBinDir returns a bin directory with the control plane of
// clustertest.BinDir and the real pg-operator and its hostpod wrapper.
func labBinDir(t *testing.T) string {
	return binDirWithOperator(t, "oplab.dev/oplab/cmd/pg-operator")
}

// learner runs oplab commands against one data directory, as a learner at
// a terminal would: every command is a new oplab process (a new Run).
type learner struct {
	t     *testing.T
	flags []string
	bin   string
}

func (l *learner) run(args ...string) (string, error) {
	l.t.Helper()
	out, errOut, err := run(l.t, append(args, l.flags...)...)
	return out + errOut, err
}

func (l *learner) must(args ...string) string {
	l.t.Helper()
	out, err := l.run(args...)
	if err != nil {
		l.t.Fatalf("oplab %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func (l *learner) status() localStatus {
	l.t.Helper()
	var st localStatus
	out := l.must("lab", "status", "-o", "json")
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		l.t.Fatalf("lab status -o json: %v\n%s", err, out)
	}
	return st
}

// kubectl runs the kubectl built beside the control plane with the
// kubeconfig oplab printed, as the learner's own kubectl would.
func (l *learner) kubectl(kubeconfig, stdin string, args ...string) string {
	l.t.Helper()
	cmd := exec.Command(filepath.Join(l.bin, "kubectl"), args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		l.t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// TestLabSession is the offline learner's whole path through the rbac lab
// on one embedded cluster: start, chaos, a failing check, a hint, reset
// without rebuilding, chaos again, the repair with kubectl, a passing
// check with its time to recovery, the quiz, the log, and stop.
func TestLabSession(t *testing.T) {
	bin := labBinDir(t)
	data := t.TempDir()
	l := &learner{t: t, flags: []string{"--data-dir", data, "--bin-dir", bin}, bin: bin}
	t.Cleanup(func() {
		l.run("lab", "stop")
		l.run("cluster", "delete", "--all")
	})

	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"lab", "status"}, "no session: start one with `oplab lab start ID`"},
		{[]string{"lab", "chaos"}, "no session"},
		{[]string{"lab", "check"}, "no session"},
		{[]string{"logs"}, "no session"},
		{[]string{"lab", "start", "nope"}, `unknown lab "nope"`},
		{[]string{"lab", "start", "rbac", "--provider", "minikube"}, `unknown cluster provider "minikube"`},
		{[]string{"lab", "start", "rbac", "--lang", "fr"}, `unknown language "fr"`},
		{[]string{"lab", "check", "-o", "yaml"}, "unknown output format"},
		{[]string{"lab", "status", "--session", "ghost"}, `no session "ghost"`},
		{[]string{"quiz", "nope"}, `unknown quiz "nope"`},
	} {
		if out, err := l.run(tt.args...); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("oplab %s: got %v (%s), want an error containing %q", strings.Join(tt.args, " "), err, out, tt.want)
		}
	}

	out := l.must("lab", "start", "rbac")
	for _, want := range []string{"→ provisioning", "✓ Starting kube-apiserver", "✓ install the operator", "provisioning → ready", "export KUBECONFIG=", "Exercise 1/1", "oplab lab chaos"} {
		if !strings.Contains(out, want) {
			t.Errorf("lab start output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "\x1b[") {
		t.Errorf("lab start wrote colour codes to a pipe:\n%s", out)
	}
	st := l.status()
	kc := regexp.MustCompile(`export KUBECONFIG=(\S+)`).FindStringSubmatch(out)
	if st.State != session.Ready || st.Kubeconfig == "" || len(kc) < 2 || kc[1] != st.Kubeconfig {
		t.Fatalf("after start: state %s, kubeconfig %q, printed %v; want ready and the same kubeconfig", st.State, st.Kubeconfig, kc)
	}
	if _, err := l.run("lab", "start", "failover"); err == nil || !strings.Contains(err.Error(), "an active session exists: "+st.ID) {
		t.Errorf("second start: got %v, want an error naming the active session", err)
	}
	if _, err := l.run("lab", "check"); err == nil || !strings.Contains(err.Error(), "inject its chaos first") {
		t.Errorf("check before chaos: got %v, want 'inject its chaos first'", err)
	}
	if _, err := l.run("lab", "chaos", "nope"); err == nil || !strings.Contains(err.Error(), `no exercise "nope"`) {
		t.Errorf("chaos of an unknown exercise: got %v", err)
	}
	// The learner's kubectl reaches the cluster; reset must not rebuild it.
	l.kubectl(st.Kubeconfig, "", "create", "configmap", "marker", "--from-literal=k=v")

	out = l.must("lab", "chaos", "restore-permissions")
	if !strings.Contains(out, "Fault confirmed at") || !strings.Contains(out, "ready → in-exercise") {
		t.Errorf("chaos output:\n%s", out)
	}
	out, err := l.run("lab", "check")
	if err == nil || !strings.Contains(err.Error(), "not recovered yet") || !strings.Contains(out, "✗ roleLeastPrivilege") {
		t.Errorf("check on the broken state: got %v, output:\n%s\nwant a failure naming roleLeastPrivilege", err, out)
	}
	out = l.must("lab", "hint")
	if !strings.Contains(out, "Hint 1 (nudge) — new") || !strings.Contains(out, "Unlocked: the operator logged: ") {
		t.Errorf("hint after a forbidden log line: got\n%s\nwant the first hint, new, unlocked by the log", out)
	}
	// A later process reads what unlocked it from the timeline; the next
	// hint (after 3m) is not due.
	out = l.must("lab", "hint")
	if !strings.Contains(out, "Unlocked: the operator logged: ") || !strings.Contains(out, "No new hint yet. Next hint in ") {
		t.Errorf("second hint: got\n%s\nwant the first hint, unlocked by the log, and the time to the next", out)
	}

	out = l.must("lab", "reset")
	if !strings.Contains(out, "in-exercise → ready") {
		t.Errorf("reset output:\n%s", out)
	}
	after := l.status()
	if after.State != session.Ready || after.Attempt != nil || after.Cluster != st.Cluster || after.HintsShown != 0 {
		t.Errorf("after reset: got %+v, want ready on the same cluster with no attempt and no hints", after)
	}
	if got := l.kubectl(st.Kubeconfig, "", "get", "configmap", "marker", "-o", "jsonpath={.data.k}"); got != "v" {
		t.Errorf("marker after reset: got %q, want v (the cluster was kept)", got)
	}

	l.must("lab", "chaos")
	// A later oplab process reads the attempt the earlier one recorded.
	broken := l.status()
	if broken.State != session.InExercise || broken.Attempt == nil || broken.Attempt.T0.IsZero() {
		t.Fatalf("after chaos: got %+v, want in-exercise with T0", broken)
	}
	restoreRole(l, st.Kubeconfig)
	var res session.CheckResult
	for i := 0; ; i++ {
		out, err = l.run("lab", "check", "-o", "json")
		if jerr := json.Unmarshal([]byte(strings.SplitN(out, "\nerror", 2)[0]), &res); jerr != nil {
			t.Fatalf("check -o json: %v\n%s", jerr, out)
		}
		if err == nil || i == 5 {
			break
		}
	}
	if !res.Passed || res.Recovery <= 0 || res.Report.Score != res.Report.Total || res.Status.State != session.Completed {
		t.Fatalf("check after the repair: got passed %v, recovery %d ms, %d/%d, state %s; want all passed and completed\n%s",
			res.Passed, res.Recovery, res.Report.Score, res.Report.Total, res.Status.State, out)
	}
	done := l.status()
	if len(done.Results) != 1 || done.Results[0].Item != "restore-permissions" || !done.Results[0].Passed || done.Results[0].Recovery != res.Recovery {
		t.Errorf("results: got %+v, want restore-permissions passed in %d ms", done.Results, res.Recovery)
	}
	out = l.must("lab", "status")
	if !strings.Contains(out, "TIME TO RECOVERY") || !strings.Contains(out, res.Recovery.Duration().String()) {
		t.Errorf("status lacks the time to recovery %s:\n%s", res.Recovery.Duration(), out)
	}
	out = l.must("lab", "list")
	if !regexp.MustCompile(fmt.Sprintf(`rbac\s+1\s+\S+\s+done %d/%d, recovered in `, res.Report.Score, res.Report.Total) + regexp.QuoteMeta(res.Recovery.Duration().String())).MatchString(out) {
		t.Errorf("lab list lacks rbac done with its time to recovery %s:\n%s", res.Recovery.Duration(), out)
	}
	if _, err := l.run("lab", "chaos"); err == nil || !strings.Contains(err.Error(), "has ended") {
		t.Errorf("chaos after completion: got %v, want 'has ended'", err)
	}

	takeQuiz(t, l, st.Kubeconfig, st.ID)

	out = l.must("logs")
	if !strings.Contains(strings.ToLower(out), "forbidden") {
		t.Errorf("logs lack the operator's forbidden line:\n%.2000s", out)
	}
	followLogs(t, l, st.Kubeconfig)

	out = l.must("lab", "stop")
	if !strings.Contains(out, "cluster "+st.ID+" deleted") {
		t.Errorf("stop output:\n%s", out)
	}
	if out := l.must("cluster", "list"); !strings.Contains(out, "No clusters") {
		t.Errorf("clusters after stop:\n%s", out)
	}
	final := l.status()
	if final.State != session.Completed || final.Kubeconfig != "" || len(final.Results) != 2 {
		t.Errorf("after stop: got state %s, kubeconfig %q, %d results; want completed, none, exercise and quiz", final.State, final.Kubeconfig, len(final.Results))
	}
	var list []session.Summary
	if err := json.Unmarshal([]byte(l.must("lab", "status", "--all", "-o", "json")), &list); err != nil || len(list) != 1 {
		t.Errorf("status --all -o json: %v, %d sessions; want 1", err, len(list))
	}
}

// restoreRole gives the operator's ClusterRole back the update verb on
// statefulsets, with kubectl, as a learner would.
func restoreRole(l *learner, kubeconfig string) {
	l.t.Helper()
	var role map[string]any
	if err := json.Unmarshal([]byte(l.kubectl(kubeconfig, "", "get", "clusterrole", "pg-operator", "-o", "json")), &role); err != nil {
		l.t.Fatal(err)
	}
	fixed := false
	for _, r := range role["rules"].([]any) {
		rule := r.(map[string]any)
		if slices.Contains(rule["resources"].([]any), any("statefulsets")) && !slices.Contains(rule["verbs"].([]any), any("update")) {
			rule["verbs"] = append(rule["verbs"].([]any), "update")
			fixed = true
		}
	}
	if !fixed {
		l.t.Fatal("the operator's ClusterRole has no statefulsets rule lacking update: the chaos did not do what this test expects")
	}
	data, _ := json.Marshal(role)
	l.kubectl(kubeconfig, string(data), "replace", "-f", "-")
}

// takeQuiz answers the failover quiz with scripted input: a wrong letter
// first (asked again), the right choices, and the cluster questions from
// what kubectl says.
func takeQuiz(t *testing.T, l *learner, kubeconfig, sessionID string) {
	t.Helper()
	// The session's own lab's quiz: a session takes no other.
	q, errs := quiz.Load(course.Embedded().Quizzes, "rbac")
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	primary := l.kubectl(kubeconfig, "", "get", "pgc", "prod-db", "-o", "jsonpath={.status.currentPrimary}")
	var input []string
	wrong := ""
	for i, qq := range q.Questions {
		if qq.Type == quiz.Cluster {
			input = append(input, "pod/"+primary)
			continue
		}
		var right []string
		for _, c := range qq.Choices {
			if c.Correct {
				right = append(right, c.ID)
			}
		}
		if i == 0 {
			input = append(input, "zz") // not a choice: asked again
		}
		if qq.Type == quiz.Single && wrong == "" {
			for _, c := range qq.Choices {
				if !c.Correct {
					wrong = qq.ID
					right = []string{c.ID}
					break
				}
			}
		}
		input = append(input, strings.Join(right, ", "))
	}
	var out, errOut syncBuffer
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	err := Run(ctx, Streams{In: strings.NewReader(strings.Join(input, "\n") + "\n"), Out: &out, ErrOut: &errOut},
		append([]string{"quiz", "rbac", "-o", "json"}, l.flags...))
	if err != nil {
		t.Fatalf("quiz: %v\n%s", err, errOut.String())
	}
	if !strings.Contains(errOut.String(), `"zz" is not a choice`) {
		t.Errorf("quiz prompts lack the complaint about zz:\n%s", errOut.String())
	}
	var got struct {
		Session string      `json:"session"`
		Result  quiz.Result `json:"result"`
	}
	if err := json.Unmarshal([]byte(out.String()), &got); err != nil {
		t.Fatalf("quiz -o json: %v\n%s", err, out.String())
	}
	if got.Session != sessionID || got.Result.Total != len(q.Questions) || got.Result.Correct != len(q.Questions)-1 {
		t.Errorf("quiz: session %q, %d/%d; want %s, %d/%d (one wrong on purpose)", got.Session, got.Result.Correct, got.Result.Total, sessionID, len(q.Questions)-1, len(q.Questions))
	}
	for _, r := range got.Result.Questions {
		if r.Correct == (r.ID == wrong) || r.Explanation.En == "" {
			t.Errorf("question %s: correct %v, explanation %q; want correct unless it is %s, and an explanation", r.ID, r.Correct, r.Explanation.En, wrong)
		}
	}
}

// followLogs runs `oplab logs -f`, makes the operator log something new,
// and checks that it appears, then stops the command.
func followLogs(t *testing.T, l *learner, kubeconfig string) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var buf syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Streams{In: strings.NewReader(""), Out: &buf, ErrOut: &buf}, append([]string{"logs", "-f"}, l.flags...))
	}()
	waitFor(t, &buf, "forbidden", 20*time.Second)
	before := strings.Count(buf.String(), "\n")
	l.kubectl(kubeconfig, "", "scale", "pgc", "prod-db", "--replicas=3")
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(buf.String()[len(buf.String())-min(len(buf.String()), 4000):], "replicas") || strings.Count(buf.String(), "\n") <= before {
		if time.Now().After(deadline) {
			t.Fatalf("logs -f printed nothing new about the scale-down in 30 s:\n%.3000s", buf.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("logs -f ended with %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("logs -f did not stop when its context ended")
	}
}

func waitFor(t *testing.T, buf *syncBuffer, want string, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !strings.Contains(strings.ToLower(buf.String()), want) {
		if time.Now().After(deadline) {
			t.Fatalf("no %q in %s:\n%.2000s", want, d, buf.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}
