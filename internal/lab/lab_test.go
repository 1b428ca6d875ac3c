package lab

import (
	"os"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"oplab.dev/oplab/internal/yamldoc"
)

func readDemo(t *testing.T) []byte {
	t.Helper()
	data, err := os.ReadFile("testdata/labs/demo/lab.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestParseDemo(t *testing.T) {
	t.Parallel()
	l, errs := Parse("demo.yaml", readDemo(t))
	if len(errs) > 0 {
		t.Fatalf("parse: %v", errs)
	}
	ex := l.Exercises[0]
	del, ok := ex.Chaos[0].Params.(*DeletePrimaryPod)
	if !ok {
		t.Fatalf("chaos params: got %T, want *DeletePrimaryPod", ex.Chaos[0].Params)
	}
	if !del.Force || del.Cluster != "prod-db" || del.Namespace != "default" {
		t.Errorf("deletePrimaryPod: got %+v, want force and the lab's target", del)
	}
	if got := ex.Goals[0]; got.Weight != 2 || got.Passes != 2 || got.Timeout.Duration != time.Minute {
		t.Errorf("primaryChanged defaults: got weight %d passes %d timeout %v, want 2, 2, 1m", got.Weight, got.Passes, got.Timeout)
	}
	if got := ex.Goals[1]; got.Weight != 1 || got.Passes != 3 || got.Timeout.Duration != 90*time.Second {
		t.Errorf("replicasReady: got weight %d passes %d timeout %v, want 1, 3, 90s", got.Weight, got.Passes, got.Timeout)
	}
	if rr := ex.Goals[1].Params.(*ReplicasReady); rr.Count != 3 {
		t.Errorf("replicasReady count: got %d, want 3", rr.Count)
	}
	if ex.TimeLimit.Duration != 5*time.Minute {
		t.Errorf("timeLimit: got %v, want 5m", ex.TimeLimit)
	}
}

// edit replaces old with new in the demo lab, failing when old is absent.
func edit(t *testing.T, src []byte, old, new string) []byte {
	t.Helper()
	s := string(src)
	if !strings.Contains(s, old) {
		t.Fatalf("fixture lacks %q", old)
	}
	return []byte(strings.Replace(s, old, new, 1))
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	demo := readDemo(t)
	tests := []struct {
		name     string
		old, new string
		line     int
		path     string
		msg      string
	}{
		{"unknown top field", "quiz: demo", "quiz: demo\nquizz: x", 16, "quizz", "unknown field"},
		{"unknown exercise field", "  timeLimit: 5m", "  timeLimit: 5m\n  timelimit: 5m", 21, "exercises[0].timelimit", "unknown field"},
		{"unknown param", "params: {force: true}", "params: {force: true, grace: 0}", 25, "exercises[0].chaos[0].params.grace", "unknown field"},
		{"unknown check kind", "- kind: exactlyOnePrimary", "- kind: exactlyTwoPrimaries", 22, "exercises[0].steadyState[0].kind", "unknown check kind"},
		{"unknown action kind", "- kind: deletePrimaryPod", "- kind: deleteEverything", 24, "exercises[0].chaos[0].kind", "unknown action kind"},
		{"bad duration", "timeLimit: 5m", "timeLimit: five minutes", 20, "exercises[0].timeLimit", "invalid duration"},
		{"bad type", "params: {count: 3}", "params: {count: three}", 33, "exercises[0].goals[1].params.count", "cannot unmarshal"},
		{"param out of range", "params: {count: 3}", "params: {count: 30}", 33, "exercises[0].goals[1].params.count", "must be 1..10"},
		{"bad regex", `log: "(?i)promot"`, `log: "(promot"`, 42, "exercises[0].hints[1].when[0].log", "invalid regular expression"},
		{"command hint first", "tier: nudge", "tier: command", 38, "exercises[0].hints[0].tier", "must not give the command away"},
		{"missing korean", `{en: "Break it", ko: "망가뜨리기"}`, `{en: "Break it"}`, 18, "exercises[0].title.ko", "missing ko"},
		{"weight on a gate", "  - kind: exactlyOnePrimary", "  - kind: exactlyOnePrimary\n    weight: 3", 23, "exercises[0].steadyState[0].weight", "only goals"},
		{"chaos without gate", "  steadyState:\n  - kind: exactlyOnePrimary\n", "", 17, "exercises[0].steadyState", "steady-state gate"},
		{"bad quantity", "size: 1Gi", "size: lots", 12, "setup[1].params.storage.size", "not a quantity"},
		{"bad verb", "- kind: installOperator", "- kind: removeRoleVerbs\n  params: {role: pg-operator, resources: [pods], verbs: [get, destroy]}", 11, "setup[0].params.verbs[1]", "unknown verb"},
		{"no target", "target: {cluster: prod-db, namespace: default}", "target: {}", 25, "exercises[0].chaos[0].params.cluster", "no cluster"},
		{"unknown capability", "requires: [disposable]", "requires: [gpu]", 7, "requires[0]", "unknown capability"},
		{"evidence with two fields", `when: [{log: "(?i)promot"}]`, `when: [{log: "x", eventReason: Y}]`, 42, "exercises[0].hints[1].when[0]", "exactly one"},
		{"duplicate key", "quiz: demo", "quiz: demo\nquiz: other", 16, "", "already defined"},
		{"lesson page twice", "lesson: [intro]", "lesson: [intro, intro]", 6, "lesson[1]", "listed twice"},
		{"syntax error", "lesson: [intro]", "lesson: [intro", 0, "", ""},
		{"shortcut refused by no goal", "refusedBy: [primaryChanged]", "refusedBy: [quotaEnforced]", 53, "exercises[0].shortcuts[0].refusedBy[0]", "not the kind of a goal"},
		{"shortcut without why", `    why: "a replica is labelled primary by hand"` + "\n", "", 48, "exercises[0].shortcuts[0].why", "say what the shortcut does"},
		{"shortcut without steps", "    steps:\n    - kind: patchObject\n      params: {apiVersion: v1, kind: Pod, name: prod-db-1, patch: '{\"metadata\": {\"labels\": {\"databases.example.com/role\": \"primary\"}}}'}\n", "    steps: []\n", 0, "exercises[0].shortcuts[0].steps", "at least one step"},
		{"patch not a mapping", `patch: '{"metadata": {"labels": {"databases.example.com/role": "primary"}}}'`, `patch: 'nope'`, 52, "exercises[0].shortcuts[0].steps[0].params.patch", "non-empty mapping"},
		{"duplicate shortcut", "  - id: relabel", "  - id: relabel\n    why: x\n    steps: [{kind: stopOperator}]\n  - id: relabel", 0, "exercises[0].shortcuts[1].id", "duplicate shortcut id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, errs := Parse("labs/demo/lab.yaml", edit(t, demo, tt.old, tt.new))
			if len(errs) == 0 {
				t.Fatal("got no error")
			}
			for _, e := range yamldoc.AsErrors(errs) {
				if e.File != "labs/demo/lab.yaml" {
					continue
				}
				if (tt.line == 0 || e.Line == tt.line) && (tt.path == "" || e.Path == tt.path) && strings.Contains(e.Msg, tt.msg) {
					return
				}
			}
			t.Errorf("got %v, want an error at line %d, field %q, containing %q", errs, tt.line, tt.path, tt.msg)
		})
	}
}

// A quotaEnforced goal must keep every resource the chaos's quota limits.
func TestQuotaEnforcedCoversTheChaosQuota(t *testing.T) {
	t.Parallel()
	src := edit(t, readDemo(t), "  - kind: deletePrimaryPod\n    params: {force: true}", "  - kind: applyQuota\n    params: {name: q, namespace: default, hard: {requests.cpu: \"1\", pods: \"3\"}}")
	src = edit(t, src, "  - kind: primaryChanged\n    weight: 2", "  - kind: primaryChanged\n    weight: 2\n  - kind: quotaEnforced\n    params: {name: q, resources: [requests.cpu], maxFactor: 2}")
	_, errs := Parse("labs/demo/lab.yaml", src)
	found := false
	for _, e := range yamldoc.AsErrors(errs) {
		found = found || e.Path == "exercises[0].goals[1].params.resources" && strings.Contains(e.Msg, "limits pods")
	}
	if !found {
		t.Errorf("got %v, want an error that the goal does not keep pods limited", errs)
	}
	fixed := edit(t, src, "resources: [requests.cpu]", "resources: [requests.cpu, pods]")
	if _, errs := Parse("labs/demo/lab.yaml", fixed); len(errs) > 0 {
		t.Errorf("every resource listed: got %v, want no errors", errs)
	}
}

func TestValidateDirRefs(t *testing.T) {
	t.Parallel()
	quizYAML, err := os.ReadFile("../quiz/testdata/sample.yaml")
	if err != nil {
		t.Fatal(err)
	}
	labs := fstest.MapFS{"demo/lab.yaml": {Data: readDemo(t)}}
	good := Refs{
		Content: fstest.MapFS{"en/intro.md": {Data: []byte("# Intro")}, "ko/intro.md": {Data: []byte("# 소개")}},
		Quizzes: fstest.MapFS{"demo.yaml": {Data: []byte(strings.Replace(string(quizYAML), "id: sample", "id: demo", 1))}},
	}
	if errs := ValidateDir(labs, good); len(errs) > 0 {
		t.Fatalf("good refs: got %v, want no errors", errs)
	}
	tests := []struct {
		name string
		refs Refs
		want string
	}{
		{"korean page missing", Refs{Content: fstest.MapFS{"en/intro.md": {}}, Quizzes: good.Quizzes}, "labs/demo/lab.yaml:6: lesson[0]: lesson page content/ko/intro.md not found"},
		{"quiz missing", Refs{Content: good.Content, Quizzes: fstest.MapFS{}}, `labs/demo/lab.yaml:15: quiz: quiz "demo" does not load`},
		{"quiz invalid", Refs{Content: good.Content, Quizzes: fstest.MapFS{"demo.yaml": {Data: []byte("apiVersion: x\n")}}}, `quiz "demo" does not load`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			errs := ValidateDir(labs, tt.refs)
			for _, e := range errs {
				if strings.Contains(e.Error(), tt.want) {
					return
				}
			}
			t.Errorf("got %v, want an error containing %q", errs, tt.want)
		})
	}
}

func TestValidateDirFolderMismatch(t *testing.T) {
	t.Parallel()
	labs := fstest.MapFS{"other/lab.yaml": {Data: readDemo(t)}}
	errs := ValidateDir(labs, Refs{Content: fstest.MapFS{}, Quizzes: fstest.MapFS{}})
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "does not match its folder") {
		t.Errorf("got %v, want one folder mismatch", errs)
	}
}

func TestRegistryParamsDecode(t *testing.T) {
	t.Parallel()
	for _, specs := range [][]KindSpec{ActionKinds(), CheckKinds()} {
		for _, s := range specs {
			if s.New() == nil || s.Timeout <= 0 || s.Doc == "" {
				t.Errorf("kind %s: got params %v, timeout %v, doc %q; want all set", s.Name, s.New(), s.Timeout, s.Doc)
			}
		}
	}
	for _, name := range []string{"deletePrimaryPod", "removeRoleVerbs", "applyQuota", "setStorageClass", "stopOperator", "scaleCluster", "applyManifest", "installOperator", "createCluster", "waitCondition"} {
		if _, ok := LookupAction(name); !ok {
			t.Errorf("action kind %s is not registered", name)
		}
	}
	for _, name := range []string{"condition", "primaryChanged", "exactlyOnePrimary", "rwEndpointsPointAtPrimary", "replicasReady", "observedGenerationCaughtUp", "roleLeastPrivilege", "quotaPresent", "eventSeen", "logLineSeen"} {
		if _, ok := LookupCheck(name); !ok {
			t.Errorf("check kind %s is not registered", name)
		}
	}
}
