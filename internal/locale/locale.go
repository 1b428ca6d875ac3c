// Package locale holds the languages oplab's course is written in and the
// bilingual text type that lab, quiz and lesson files share, so that both
// languages always travel together in one file.
package locale

// Lang is a course language code.
type Lang string

// The languages of the course.
const (
	En Lang = "en"
	Ko Lang = "ko"
)

// All returns every course language, English first.
func All() []Lang { return []Lang{En, Ko} }

// Valid reports whether l is a course language.
func (l Lang) Valid() bool { return l == En || l == Ko }

// Text is one piece of text in every course language.
type Text struct {
	En string `yaml:"en" json:"en"`
	Ko string `yaml:"ko" json:"ko"`
}

// In returns the text in language l, falling back to English.
func (t Text) In(l Lang) string {
	if l == Ko && t.Ko != "" {
		return t.Ko
	}
	return t.En
}

// Missing returns the languages in which t is empty.
func (t Text) Missing() []Lang {
	var out []Lang
	if t.En == "" {
		out = append(out, En)
	}
	if t.Ko == "" {
		out = append(out, Ko)
	}
	return out
}
