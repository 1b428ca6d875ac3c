package lesson

import (
	"fmt"
	"html"
	"net/url"
	"path"
	"strings"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"

	"oplab.dev/oplab/internal/locale"
	"oplab.dev/oplab/internal/yamldoc"
)

// ConsoleLang is the info string of a fenced block of console commands.
const ConsoleLang = "kubectl"

var stateKey = parser.NewContextKey()

// state collects what one Render call learns about its page.
type state struct {
	file     string
	lang     locale.Lang
	src      []byte
	links    []Link
	commands []string
	errs     []error
}

func (s *state) errorf(line int, format string, args ...any) {
	s.errs = append(s.errs, &yamldoc.Error{File: s.file, Line: line, Msg: fmt.Sprintf(format, args...)})
}

// CommandBlock is a ```kubectl block: one console command per line.
type CommandBlock struct {
	ast.BaseBlock
	Entries []string // commands and # comments, in order
	Label   string   // the run button's text
}

// KindCommandBlock is the ast.NodeKind of CommandBlock.
var KindCommandBlock = ast.NewNodeKind("CommandBlock")

// Kind implements ast.Node.
func (n *CommandBlock) Kind() ast.NodeKind { return KindCommandBlock }

// Dump implements ast.Node.
func (n *CommandBlock) Dump(src []byte, level int) {
	ast.DumpHelper(n, src, level, map[string]string{"Entries": strings.Join(n.Entries, "; ")}, nil)
}

// transformer replaces kubectl blocks with CommandBlocks and records and
// rewrites links between pages.
type transformer struct{}

func (t *transformer) Transform(doc *ast.Document, reader text.Reader, pc parser.Context) {
	st, _ := pc.Get(stateKey).(*state)
	if st == nil {
		return
	}
	src := reader.Source()
	var blocks []*ast.FencedCodeBlock
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.FencedCodeBlock:
			if string(n.Language(src)) == ConsoleLang {
				blocks = append(blocks, n)
			}
		case *ast.Link:
			st.link(n, src)
		}
		return ast.WalkContinue, nil
	})
	for _, b := range blocks {
		st.replace(b, src)
	}
}

func (s *state) replace(b *ast.FencedCodeBlock, src []byte) {
	cb := &CommandBlock{Label: runLabel(s.lang)}
	for i := 0; i < b.Lines().Len(); i++ {
		seg := b.Lines().At(i)
		line := trimCommand(string(seg.Value(src)))
		switch {
		case line == "":
			continue
		case strings.HasPrefix(line, "#"):
		case !strings.HasPrefix(line, "kubectl "):
			s.errorf(lineOf(src, seg.Start), "a %s block holds kubectl commands only, got %q", ConsoleLang, line)
			continue
		default:
			s.commands = append(s.commands, line)
		}
		cb.Entries = append(cb.Entries, line)
	}
	b.Parent().ReplaceChild(b.Parent(), b, cb)
}

// link records a link to another page ("other.md" or "other.md#part") and
// rewrites it to the page's URL, which is its id beside this page.
func (s *state) link(n *ast.Link, src []byte) {
	dest := string(n.Destination)
	u, err := url.Parse(dest)
	if err != nil || u.Scheme != "" || u.Host != "" || u.Path == "" {
		return
	}
	if strings.HasPrefix(u.Path, "/") {
		return
	}
	if path.Ext(u.Path) != ".md" || strings.Contains(u.Path, "/") {
		s.errorf(linkLine(n, src), "link %q: link to another page as <id>.md", dest)
		return
	}
	id := strings.TrimSuffix(u.Path, ".md")
	s.links = append(s.links, Link{Page: id, Line: linkLine(n, src)})
	u.Path = id
	n.Destination = []byte(u.String())
}

func linkLine(n ast.Node, src []byte) int {
	for c := n.FirstChild(); c != nil; c = c.FirstChild() {
		if t, ok := c.(*ast.Text); ok {
			return lineOf(src, t.Segment.Start)
		}
	}
	for p := n.Parent(); p != nil; p = p.Parent() {
		if p.Type() == ast.TypeBlock && p.Lines().Len() > 0 {
			return lineOf(src, p.Lines().At(0).Start)
		}
	}
	return 0
}

// commandRenderer renders CommandBlocks.
type commandRenderer struct{}

func (r *commandRenderer) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(KindCommandBlock, r.render)
}

func (r *commandRenderer) render(w util.BufWriter, _ []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkContinue, nil
	}
	cb := n.(*CommandBlock)
	_, _ = w.WriteString(`<div class="console-commands">` + "\n")
	for _, line := range cb.Entries {
		esc := html.EscapeString(line)
		if strings.HasPrefix(line, "#") {
			_, _ = w.WriteString(`<div class="console-comment"><code>` + esc + "</code></div>\n")
			continue
		}
		_, _ = w.WriteString(`<div class="console-command"><code>` + esc + `</code>` +
			`<button type="button" class="console-run" data-command="` + esc + `">` +
			html.EscapeString(cb.Label) + "</button></div>\n")
	}
	_, _ = w.WriteString("</div>\n")
	return ast.WalkSkipChildren, nil
}
