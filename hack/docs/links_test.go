// Package docs_test keeps the README and the pages under docs/ honest: every
// relative link names a file of the repository that exists, every #anchor
// names a heading of the page it points into, and every make target the
// pages show in code is a target of the Makefile. Links inside code (spans
// and fenced blocks) are examples, not links, and are skipped.
package docs_test

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"regexp"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"unicode"
)

var (
	// linkRE finds inline links and images; their text may span lines.
	linkRE     = regexp.MustCompile(`!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	codeSpanRE = regexp.MustCompile("`[^`\n]*`")
	headingRE  = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*#*\s*$`)
	schemeRE   = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)
	makeRE     = regexp.MustCompile(`(?:^|[\s("'])make\s+(?:-s\s+)?([a-z][a-z0-9-]*)`)
	targetRE   = regexp.MustCompile(`(?m)^([a-zA-Z0-9_.-]+(?:\s+[a-zA-Z0-9_.$()/-]+)*)\s*&?:([^=]|$)`)
)

// pages are the files whose links are checked: the README and docs/*.md.
func pages(t *testing.T, fsys fs.FS) []string {
	t.Helper()
	docs, err := fs.Glob(fsys, "docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	return append([]string{"README.md"}, docs...)
}

// split returns a page's prose, with fenced blocks removed and code spans
// blanked, and its code: the fenced blocks' lines and the spans' text.
func split(doc string) (prose, code string) {
	var p, c strings.Builder
	fenced := false
	for line := range strings.Lines(doc) {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			p.WriteString("\n")
			continue
		}
		if fenced {
			c.WriteString(line)
			p.WriteString("\n")
			continue
		}
		for _, span := range codeSpanRE.FindAllString(line, -1) {
			c.WriteString(strings.Trim(span, "`") + "\n")
		}
		p.WriteString(codeSpanRE.ReplaceAllString(line, "code"))
	}
	return p.String(), c.String()
}

// anchors returns the anchors GitHub makes of a page's headings:
// lower case, punctuation dropped, spaces as dashes, repeats numbered.
func anchors(doc string) map[string]bool {
	prose, _ := split(doc)
	out := map[string]bool{}
	for line := range strings.Lines(prose) {
		m := headingRE.FindStringSubmatch(strings.TrimRight(line, "\n"))
		if m == nil {
			continue
		}
		var b strings.Builder
		for _, r := range strings.ToLower(m[1]) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r):
				b.WriteRune(r)
			}
		}
		a := b.String()
		for i := 1; out[a]; i++ {
			a = fmt.Sprintf("%s-%d", b.String(), i)
		}
		out[a] = true
	}
	return out
}

// brokenLinks returns one line for each relative link of page that names
// no file of fsys, or a heading its page does not have.
func brokenLinks(fsys fs.FS, page string) ([]string, error) {
	doc, err := fs.ReadFile(fsys, page)
	if err != nil {
		return nil, err
	}
	prose, _ := split(string(doc))
	var broken []string
	for _, m := range linkRE.FindAllStringSubmatch(prose, -1) {
		target := m[1]
		if schemeRE.MatchString(target) {
			continue // a URL: not ours to check offline
		}
		file, anchor, _ := strings.Cut(target, "#")
		resolved := page
		if file != "" {
			resolved = path.Join(path.Dir(page), file)
			if !fs.ValidPath(resolved) {
				broken = append(broken, fmt.Sprintf("%s: %s leaves the repository", page, target))
				continue
			}
			if _, err := fs.Stat(fsys, resolved); err != nil {
				broken = append(broken, fmt.Sprintf("%s: %s: no such file %s", page, target, resolved))
				continue
			}
		}
		if anchor == "" || !strings.HasSuffix(resolved, ".md") {
			continue
		}
		into, err := fs.ReadFile(fsys, resolved)
		if err != nil {
			return nil, err
		}
		if !anchors(string(into))[anchor] {
			broken = append(broken, fmt.Sprintf("%s: %s: %s has no heading #%s", page, target, resolved, anchor))
		}
	}
	return broken, nil
}

// missingTargets returns the make targets page shows in code that the
// Makefile does not define.
func missingTargets(fsys fs.FS, page string) ([]string, error) {
	mk, err := fs.ReadFile(fsys, "Makefile")
	if err != nil {
		return nil, err
	}
	defined := map[string]bool{}
	for _, m := range targetRE.FindAllStringSubmatch(string(mk), -1) {
		for _, name := range strings.Fields(m[1]) {
			defined[name] = true
		}
	}
	doc, err := fs.ReadFile(fsys, page)
	if err != nil {
		return nil, err
	}
	_, code := split(string(doc))
	var missing []string
	for _, m := range makeRE.FindAllStringSubmatch(code, -1) {
		if !defined[m[1]] && !slices.Contains(missing, m[1]) {
			missing = append(missing, m[1])
		}
	}
	return missing, nil
}

// TestDocLinks checks the repository's own README and docs/.
func TestDocLinks(t *testing.T) {
	t.Parallel()
	root := os.DirFS("../..")
	if _, err := fs.Stat(root, "go.mod"); err != nil {
		t.Fatalf("the repository's root is not ../..: %v", err)
	}
	for _, page := range pages(t, root) {
		t.Run(page, func(t *testing.T) {
			t.Parallel()
			broken, err := brokenLinks(root, page)
			if err != nil {
				t.Fatal(err)
			}
			for _, b := range broken {
				t.Error(b)
			}
			missing, err := missingTargets(root, page)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range missing {
				t.Errorf("%s shows `make %s`, which the Makefile does not define", page, m)
			}
		})
	}
}

// TestCheckerFindsBreaks feeds the checker pages with known breaks, so that
// TestDocLinks passing means the links hold, not that nothing was checked.
func TestCheckerFindsBreaks(t *testing.T) {
	t.Parallel()
	fsys := fstest.MapFS{
		"Makefile": {Data: []byte(".PHONY: run\nrun: build ## start\n\tgo run .\nbuild:\n\tgo build\nA := b\nx y &: z\n")},
		"docs/a.md": {Data: []byte("# Page A\n\n## Two words, `code` and (more)\n\n## Repeat\n\n## Repeat\n\n" +
			"[ok](b.md) [ok](#two-words-code-and-more) [ok](#repeat-1) [ok](../go.mod) [ok](https://x.example/y)\n" +
			"[bad](c.md) [bad](#nowhere) [bad](b.md#missing) [bad](../../outside.md)\n" +
			"![an image\nwhose text spans lines](img/none.png)\n" +
			"`[skipped](code.md)` `make run` `make x` `eval \"$(make -s build)\"` `make nothing`\n" +
			"```sh\n[skipped](fenced.md)\n# not a heading\nmake test # a target we lack\n```\n")},
		"docs/b.md": {Data: []byte("# B\n\n## Here\n")},
		"go.mod":    {Data: []byte("module example\n")},
	}
	tests := []struct {
		name string
		got  func() ([]string, error)
		want []string
	}{
		{"links", func() ([]string, error) { return brokenLinks(fsys, "docs/a.md") }, []string{
			"docs/a.md: c.md: no such file docs/c.md",
			"docs/a.md: #nowhere: docs/a.md has no heading #nowhere",
			"docs/a.md: b.md#missing: docs/b.md has no heading #missing",
			"docs/a.md: ../../outside.md leaves the repository",
			"docs/a.md: img/none.png: no such file docs/img/none.png",
		}},
		{"make targets", func() ([]string, error) { return missingTargets(fsys, "docs/a.md") }, []string{"nothing", "test"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.got()
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}
