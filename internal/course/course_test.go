package course

import (
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"

	"oplab.dev/oplab/content"
	"oplab.dev/oplab/internal/lab"
	"oplab.dev/oplab/internal/lesson"
	"oplab.dev/oplab/internal/locale"
	"oplab.dev/oplab/internal/quiz"
	"oplab.dev/oplab/labs"
	"oplab.dev/oplab/quizzes"
)

func shipped() Sources {
	return Sources{Labs: labs.FS, Content: content.FS, Quizzes: quizzes.FS}
}

func TestShippedCourseValidates(t *testing.T) {
	t.Parallel()
	for _, err := range Validate(shipped()) {
		t.Error(err)
	}
}

// copyFS copies fsys into a MapFS that a test may change.
func copyFS(t *testing.T, fsys fs.FS) fstest.MapFS {
	t.Helper()
	m := fstest.MapFS{}
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(fsys, p)
		m[p] = &fstest.MapFile{Data: data}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// replace changes old to new in file of m, failing when old is absent.
func replace(t *testing.T, m fstest.MapFS, file, old, new string) {
	t.Helper()
	f, ok := m[file]
	if !ok || !strings.Contains(string(f.Data), old) {
		t.Fatalf("%s lacks %q", file, old)
	}
	m[file] = &fstest.MapFile{Data: []byte(strings.Replace(string(f.Data), old, new, 1))}
}

func TestValidateCatchesBrokenCourse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		break_ func(t *testing.T, labs, content, quizzes fstest.MapFS)
		want   string
	}{
		{"korean page missing", func(t *testing.T, _, c, _ fstest.MapFS) { delete(c, "ko/quota.md") },
			"content/en/quota.md: page has no ko version"},
		{"english page missing", func(t *testing.T, _, c, _ fstest.MapFS) { delete(c, "en/storage.md") },
			"content/ko/storage.md: page has no en version"},
		{"lab lesson page missing", func(t *testing.T, _, c, _ fstest.MapFS) { delete(c, "ko/switchover.md"); delete(c, "en/switchover.md") },
			"labs/switchover/lab.yaml:8: lesson[0]: lesson page content/en/switchover.md not found"},
		{"broken link", func(t *testing.T, _, c, _ fstest.MapFS) {
			replace(t, c, "ko/switchover.md", "(failover.md)", "(failovr.md)")
		}, `link to page "failovr", which does not exist in ko`},
		{"broken link in lab instructions", func(t *testing.T, l, _, _ fstest.MapFS) {
			replace(t, l, "failover/lab.yaml", "Follow the reconcile log", "Follow [the log](logs.md)")
		}, `labs/failover/lab.yaml: exercises[0].instructions.en: link to page "logs"`},
		{"unknown check kind", func(t *testing.T, l, _, _ fstest.MapFS) {
			replace(t, l, "quota/lab.yaml", "kind: quotaEnforced", "kind: quotaStillThere")
		}, `unknown check kind "quotaStillThere"`},
		{"unknown action kind", func(t *testing.T, l, _, _ fstest.MapFS) {
			replace(t, l, "rbac/lab.yaml", "kind: removeRoleVerbs", "kind: breakRole")
		}, `unknown action kind "breakRole"`},
		{"lab quiz missing", func(t *testing.T, _, _, q fstest.MapFS) { delete(q, "storage.yaml") },
			`labs/storage/lab.yaml:12: quiz: quiz "storage" does not load`},
		{"quiz names unknown lab", func(t *testing.T, _, _, q fstest.MapFS) {
			replace(t, q, "course.yaml", "id: course\n", "id: course\nlab: chaos-monkey\n")
		}, `quizzes/course.yaml: lab: lab "chaos-monkey" does not exist`},
		{"question lacks korean", func(t *testing.T, _, _, q fstest.MapFS) {
			replace(t, q, "failover.yaml", `    ko: "오퍼레이터가 재시작되는 바람에 프라이머리 파드 삭제 이벤트를 놓쳤습니다. 어떻게 되나요?"`+"\n", "")
		}, "quizzes/failover.yaml:21: questions[1].prompt.ko: missing ko text"},
		{"front matter names unknown lab", func(t *testing.T, _, c, _ fstest.MapFS) {
			replace(t, c, "en/quota.md", "lab: quota", "lab: quotas")
		}, `content/en/quota.md:2: lab: lab "quotas" does not exist`},
		{"languages disagree on order", func(t *testing.T, _, c, _ fstest.MapFS) {
			replace(t, c, "ko/rbac.md", "order: 7", "order: 70")
		}, "content/ko/rbac.md:2: front matter order/lab (70"},
		{"languages disagree on commands", func(t *testing.T, _, c, _ fstest.MapFS) {
			replace(t, c, "ko/quota.md", "kubectl get resourcequota -n default", "kubectl get resourcequota -A")
		}, "content/ko/quota.md: console commands differ"},
		{"console block with a shell command", func(t *testing.T, _, c, _ fstest.MapFS) {
			replace(t, c, "en/storage.md", "kubectl get storageclass\n", "kubectl get storageclass\nrm -rf /var/lib/postgresql\n")
		}, "kubectl commands only"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			l, c, q := copyFS(t, labs.FS), copyFS(t, content.FS), copyFS(t, quizzes.FS)
			tt.break_(t, l, c, q)
			errs := Validate(Sources{Labs: l, Content: c, Quizzes: q})
			for _, err := range errs {
				if strings.Contains(err.Error(), tt.want) {
					return
				}
			}
			t.Errorf("got %d errors %v, want one containing %q", len(errs), errs, tt.want)
		})
	}
}

// TestCourseShape checks what issue 4 and 5 ask the shipped course to hold.
func TestCourseShape(t *testing.T) {
	t.Parallel()
	ls, errs := lab.LoadAll(labs.FS)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	got := map[string]*lab.Lab{}
	for _, l := range ls {
		got[l.ID] = l
	}
	for _, id := range []string{"operator-basics", "failover", "rbac", "quota", "storage", "switchover"} {
		if got[id] == nil {
			t.Errorf("lab %s is not shipped", id)
		}
	}
	qs, errs := quiz.LoadAll(quizzes.FS)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	total, cluster := 0, 0
	for _, q := range qs {
		total += len(q.Questions)
		for _, qq := range q.Questions {
			if qq.Type == quiz.Cluster {
				cluster++
			}
		}
	}
	if total < 24 {
		t.Errorf("got %d quiz questions, want at least 24", total)
	}
	if cluster < 3 {
		t.Errorf("got %d cluster questions, want at least 3", cluster)
	}
	if q := qs["course"]; q == nil || q.Lab != "" {
		t.Errorf("want a course-wide quiz with id course and no lab")
	}
	for id, l := range got {
		if q := qs[l.Quiz]; q == nil || q.Lab != id {
			t.Errorf("lab %s: quiz %q should exist and name the lab", id, l.Quiz)
		}
		n := 0
		for _, ex := range l.Exercises {
			n += len(ex.Shortcuts)
		}
		if n < 3 {
			t.Errorf("lab %s: got %d known shortcuts, want at least 3 for its self-test to try", id, n)
		}
	}
}

// TestLessonPagesListedByTheirLab checks that a page naming a lab in its
// front matter is part of that lab's lesson.
func TestLessonPagesListedByTheirLab(t *testing.T) {
	t.Parallel()
	ls, _ := lab.LoadAll(labs.FS)
	lesson1 := map[string]map[string]bool{}
	for _, l := range ls {
		lesson1[l.ID] = map[string]bool{}
		for _, p := range l.Lesson {
			lesson1[l.ID][p] = true
		}
	}
	pages, errs := lesson.New().LoadAll(content.FS, locale.En)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	for _, p := range pages {
		if p.Meta.Lab != "" && !lesson1[p.Meta.Lab][p.ID] {
			t.Errorf("page %s names lab %s, whose lesson does not list it", p.ID, p.Meta.Lab)
		}
	}
}

// TestTopicsCovered checks that each topic of issue 5 is taught in both
// languages (terms stay as Kubernetes spells them).
func TestTopicsCovered(t *testing.T) {
	t.Parallel()
	terms := []string{
		"CRD", "StatefulSet", "PVC", "ConfigMap", "Secret", "CronJob", "RBAC", "runbook|런북",
		"Informer", "WorkQueue", "RequeueAfter", "backoff|백오프", "status",
		"level-triggered|레벨 트리거", "edge-triggered|엣지 트리거", "CreateOrUpdate", "409 Conflict", "owner reference|ownerReferences", "finalizer",
		"OpenAPI", "shortNames", "scope", "subresource|서브리소스", "additionalPrinterColumns", "versions",
		"CloudNativePG", "Patroni", "Sentinel", "cert-manager", "Prometheus Operator", "OperatorHub", "controller-runtime", "Operator SDK", "Level 3|level 3|3단계",
		"forbidden", "ProvisioningFailed", "exceeded quota", "ResourceQuota", "StorageClass", "checklist|체크리스트",
		"upgrad|업그레이드", "allowVolumeExpansion", "migration|마이그레이션",
		"Reconcile", "differs", "did",
	}
	for _, lang := range locale.All() {
		var all strings.Builder
		ids, err := lesson.PageIDs(content.FS, lang)
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range ids {
			b, _ := fs.ReadFile(content.FS, string(lang)+"/"+id+".md")
			all.Write(b)
		}
		text := all.String()
		for _, term := range terms {
			found := false
			for _, alt := range strings.Split(term, "|") {
				found = found || strings.Contains(text, alt)
			}
			if !found {
				t.Errorf("%s pages never mention %q", lang, term)
			}
		}
	}
}
