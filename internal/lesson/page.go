package lesson

import (
	"bytes"
	"fmt"

	"oplab.dev/oplab/internal/locale"
	"oplab.dev/oplab/internal/yamldoc"
)

// Meta is a page's front matter.
type Meta struct {
	Title string `yaml:"title"`
	Order int    `yaml:"order"`
	// Lab is the id of the lab this page is the lesson of, if any.
	Lab string `yaml:"lab,omitempty"`
}

// Page is a rendered lesson page.
type Page struct {
	ID   string
	Lang locale.Lang
	Meta Meta
	HTML string
	// Links are the ids of the pages this page links to (as "<id>.md").
	Links []Link
	// Commands are the console commands of the page's kubectl blocks.
	Commands []string
}

// Link is a link to another page, with the line it is on.
type Link struct {
	Page string
	Line int
}

var fence = []byte("---\n")

// splitFrontMatter returns the front matter (without its fences) and the
// body. The body keeps its place in the file: lines are padded so that line
// numbers in the body are the file's.
func splitFrontMatter(file string, src []byte) (fm, body []byte, err error) {
	src = bytes.ReplaceAll(src, []byte("\r\n"), []byte("\n"))
	if !bytes.HasPrefix(src, fence) {
		return nil, nil, &yamldoc.Error{File: file, Line: 1, Msg: "missing front matter (start the file with ---)"}
	}
	rest := src[len(fence):]
	end := bytes.Index(rest, []byte("\n---\n"))
	if end < 0 {
		if bytes.HasSuffix(rest, []byte("\n---")) {
			end = len(rest) - 4
		} else {
			return nil, nil, &yamldoc.Error{File: file, Line: 1, Msg: "front matter is not closed by ---"}
		}
	}
	fm = rest[:end+1]
	body = rest[min(end+5, len(rest)):]
	pad := bytes.Repeat([]byte("\n"), bytes.Count(fm, []byte("\n"))+2)
	return fm, append(pad, body...), nil
}

func parseMeta(file string, fm []byte) (Meta, []error) {
	var m Meta
	doc, err := yamldoc.Parse(file, fm)
	if err != nil {
		return m, shift([]error{err})
	}
	if errs := doc.Decode(&m); len(errs) > 0 {
		return m, shift(errs)
	}
	var errs []error
	if m.Title == "" {
		errs = append(errs, doc.Errorf("title", "title is required"))
	}
	if m.Order < 1 {
		errs = append(errs, doc.Errorf("order", "order must be 1 or more, got %d", m.Order))
	}
	return m, shift(errs)
}

// shift moves front-matter line numbers past the opening fence.
func shift(errs []error) []error {
	for _, e := range yamldoc.AsErrors(errs) {
		if e.Line > 0 {
			e.Line++
		}
		e.Msg = fmt.Sprintf("front matter: %s", e.Msg)
	}
	return errs
}
