package lesson

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	chromahtml "github.com/alecthomas/chroma/v2/formatters/html"
	"github.com/alecthomas/chroma/v2/styles"
	"github.com/yuin/goldmark"
	highlighting "github.com/yuin/goldmark-highlighting/v2"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"

	"oplab.dev/oplab/internal/locale"
	"oplab.dev/oplab/internal/yamldoc"
)

// Renderer turns lesson markdown into pages. It is safe for concurrent use.
type Renderer struct {
	md goldmark.Markdown
}

// New returns a Renderer.
func New() *Renderer {
	md := goldmark.New(
		goldmark.WithExtensions(
			extension.GFM,
			highlighting.NewHighlighting(
				highlighting.WithFormatOptions(chromahtml.WithClasses(true)),
			),
		),
		goldmark.WithParserOptions(
			parser.WithAutoHeadingID(),
			parser.WithASTTransformers(util.Prioritized(&transformer{}, 100)),
		),
		goldmark.WithRendererOptions(
			renderer.WithNodeRenderers(util.Prioritized(&commandRenderer{}, 100)),
		),
	)
	return &Renderer{md: md}
}

// Render renders one page; file names it in errors. All errors are
// *yamldoc.Error with the line in the file.
func (r *Renderer) Render(file, id string, lang locale.Lang, src []byte) (*Page, []error) {
	fm, body, err := splitFrontMatter(file, src)
	if err != nil {
		return nil, []error{err}
	}
	meta, errs := parseMeta(file, fm)
	html, st, rerrs := r.render(file, lang, body)
	errs = append(errs, rerrs...)
	if len(errs) > 0 {
		return nil, errs
	}
	return &Page{ID: id, Lang: lang, Meta: meta, HTML: html, Links: st.links, Commands: st.commands}, nil
}

// Fragment is rendered markdown that is not a page: a lab's instructions
// or a hint.
type Fragment struct {
	HTML     string
	Links    []Link
	Commands []string
}

// RenderFragment renders markdown without front matter.
func (r *Renderer) RenderFragment(file string, lang locale.Lang, src []byte) (*Fragment, []error) {
	html, st, errs := r.render(file, lang, src)
	if len(errs) > 0 {
		return nil, errs
	}
	return &Fragment{HTML: html, Links: st.links, Commands: st.commands}, nil
}

func (r *Renderer) render(file string, lang locale.Lang, body []byte) (string, *state, []error) {
	pc := parser.NewContext(parser.WithIDs(newHeadingIDs()))
	st := &state{file: file, lang: lang, src: body}
	pc.Set(stateKey, st)
	doc := r.md.Parser().Parse(text.NewReader(body), parser.WithContext(pc))
	var buf bytes.Buffer
	var errs []error
	if err := r.md.Renderer().Render(&buf, body, doc); err != nil {
		errs = append(errs, &yamldoc.Error{File: file, Msg: fmt.Sprintf("render: %v", err)})
	}
	return buf.String(), st, append(errs, st.errs...)
}

// WriteCSS writes the stylesheet for highlighted code (chroma classes).
func WriteCSS(w io.Writer) error {
	style := styles.Get("github")
	if err := chromahtml.New(chromahtml.WithClasses(true)).WriteCSS(w, style); err != nil {
		return fmt.Errorf("write highlight css: %w", err)
	}
	return nil
}

// lineOf returns the 1-based line of byte offset off in src.
func lineOf(src []byte, off int) int {
	return bytes.Count(src[:min(off, len(src))], []byte("\n")) + 1
}

// runLabel is the console button's text in each language.
func runLabel(l locale.Lang) string {
	if l == locale.Ko {
		return "실행"
	}
	return "Run"
}

func trimCommand(s string) string { return strings.TrimSpace(s) }
