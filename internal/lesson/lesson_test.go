package lesson

import (
	"strings"
	"testing"
	"testing/fstest"

	"oplab.dev/oplab/internal/locale"
	"oplab.dev/oplab/internal/yamldoc"
)

const page = `---
title: The reconcile loop
order: 2
lab: operator-basics
---
# Watch, diff, act

| step | what |
|------|------|
| Watch | informer |

See [failover](failover.md#fencing) and [Kubernetes](https://kubernetes.io/).

` + "```kubectl" + `
# list clusters
kubectl get pgc

kubectl get pods -l 'databases.example.com/role=primary' -o name
` + "```" + `

` + "```go" + `
func main() {}
` + "```" + `

<script>alert(1)</script>
[bad](javascript:alert(1))
`

func TestRender(t *testing.T) {
	t.Parallel()
	p, errs := New().Render("x.md", "reconcile-loop", locale.En, []byte(page))
	if len(errs) > 0 {
		t.Fatalf("render: %v", errs)
	}
	if p.Meta != (Meta{Title: "The reconcile loop", Order: 2, Lab: "operator-basics"}) {
		t.Errorf("meta: got %+v", p.Meta)
	}
	wantCmds := []string{"kubectl get pgc", "kubectl get pods -l 'databases.example.com/role=primary' -o name"}
	if strings.Join(p.Commands, "|") != strings.Join(wantCmds, "|") {
		t.Errorf("commands: got %q, want %q", p.Commands, wantCmds)
	}
	if len(p.Links) != 1 || p.Links[0] != (Link{Page: "failover", Line: 12}) {
		t.Errorf("links: got %+v, want failover on line 12", p.Links)
	}
	for _, want := range []string{
		"<table>", "<th>step</th>",
		`href="failover#fencing"`,
		`data-command="kubectl get pods -l &#39;databases.example.com/role=primary&#39; -o name"`,
		`<button type="button" class="console-run" data-command="kubectl get pgc">Run</button>`,
		`<div class="console-comment"><code># list clusters</code></div>`,
		`class="chroma"`,
	} {
		if !strings.Contains(p.HTML, want) {
			t.Errorf("html lacks %q:\n%s", want, p.HTML)
		}
	}
	for _, bad := range []string{"<script>", "javascript:", "```kubectl"} {
		if strings.Contains(p.HTML, bad) {
			t.Errorf("html contains %q:\n%s", bad, p.HTML)
		}
	}
}

func TestRenderKoreanButton(t *testing.T) {
	t.Parallel()
	src := "---\ntitle: 제목\norder: 1\n---\n## 순서와 단계\n\n## 순서와 단계\n\n```kubectl\nkubectl get pgc\n```\n"
	p, errs := New().Render("x.md", "x", locale.Ko, []byte(src))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if !strings.Contains(p.HTML, ">실행</button>") {
		t.Errorf("got %s, want a 실행 button", p.HTML)
	}
	for _, want := range []string{`<h2 id="순서와-단계">`, `<h2 id="순서와-단계-1">`} {
		if !strings.Contains(p.HTML, want) {
			t.Errorf("got %s, want heading %s", p.HTML, want)
		}
	}
}

func TestRenderErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		src  string
		line int
		msg  string
	}{
		{"no front matter", "# hi\n", 1, "missing front matter"},
		{"unclosed", "---\ntitle: x\n", 1, "not closed"},
		{"unknown field", "---\ntitle: x\norder: 1\nlabb: y\n---\n", 4, "unknown field"},
		{"no title", "---\norder: 1\n---\n", 0, "title is required"},
		{"not kubectl", "---\ntitle: x\norder: 1\n---\ntext\n\n```kubectl\nrm -rf /\n```\n", 8, "kubectl commands only"},
		{"link to a folder", "---\ntitle: x\norder: 1\n---\n\nsee [x](../ko/x.md)\n", 6, "link to another page"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, errs := New().Render("x.md", "x", locale.En, []byte(tt.src))
			for _, e := range yamldoc.AsErrors(errs) {
				if e.File == "x.md" && (tt.line == 0 || e.Line == tt.line) && strings.Contains(e.Msg, tt.msg) {
					return
				}
			}
			t.Errorf("got %v, want x.md:%d: ...%s", errs, tt.line, tt.msg)
		})
	}
}

func TestLoadAllOrders(t *testing.T) {
	t.Parallel()
	fsys := fstest.MapFS{
		"en/b.md":      {Data: []byte("---\ntitle: B\norder: 1\n---\nb\n")},
		"en/a.md":      {Data: []byte("---\ntitle: A\norder: 2\n---\na\n")},
		"en/notes.txt": {Data: []byte("ignored")},
	}
	pages, errs := New().LoadAll(fsys, locale.En)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if len(pages) != 2 || pages[0].ID != "b" || pages[1].ID != "a" {
		t.Errorf("got %v, want b then a", pages)
	}
}
