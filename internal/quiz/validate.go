package quiz

import (
	"fmt"
	"regexp"

	"oplab.dev/oplab/internal/locale"
	"oplab.dev/oplab/internal/yamldoc"
)

var idRE = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?$`)

// ValidID reports whether s is a valid quiz, question or choice id.
func ValidID(s string) bool { return idRE.MatchString(s) }

func validate(doc *yamldoc.Doc, q *Quiz) []error {
	var errs []error
	add := func(p, f string, a ...any) { errs = append(errs, doc.Errorf(p, f, a...)) }
	if q.APIVersion != APIVersion {
		add("apiVersion", "must be %q, got %q", APIVersion, q.APIVersion)
	}
	if q.Kind != Kind {
		add("kind", "must be %q, got %q", Kind, q.Kind)
	}
	if !ValidID(q.ID) {
		add("id", "invalid id %q (lowercase letters, digits and dashes)", q.ID)
	}
	errs = append(errs, textErrors(doc, "title", q.Title)...)
	if q.Attempts != nil && (*q.Attempts < 1 || *q.Attempts > MaxAttempts) {
		add("attempts", "must be from 1 to %d, got %d (omit it for %d)", MaxAttempts, *q.Attempts, DefaultAttempts)
	}
	if len(q.Questions) == 0 {
		add("questions", "a quiz needs at least one question")
	}
	seen := map[string]bool{}
	for i := range q.Questions {
		p := fmt.Sprintf("questions[%d]", i)
		qq := &q.Questions[i]
		if seen[qq.ID] {
			add(p+".id", "duplicate question id %q", qq.ID)
		}
		seen[qq.ID] = true
		errs = append(errs, validateQuestion(doc, p, qq)...)
	}
	return errs
}

func validateQuestion(doc *yamldoc.Doc, p string, q *Question) []error {
	var errs []error
	add := func(p, f string, a ...any) { errs = append(errs, doc.Errorf(p, f, a...)) }
	if !ValidID(q.ID) {
		add(p+".id", "invalid id %q", q.ID)
	}
	errs = append(errs, textErrors(doc, p+".prompt", q.Prompt)...)
	errs = append(errs, textErrors(doc, p+".explanation", q.Explanation)...)
	switch q.Type {
	case Single, Multiple:
		if q.Answer != nil {
			add(p+".answer", "only cluster questions have an answer query; mark choices correct instead")
		}
		errs = append(errs, validateChoices(doc, p, q)...)
	case Cluster:
		if len(q.Choices) > 0 {
			add(p+".choices", "cluster questions have no choices")
		}
		errs = append(errs, validateQuery(doc, p+".answer", q.Answer)...)
	default:
		add(p+".type", "unknown question type %q (want single, multiple or cluster)", q.Type)
	}
	return errs
}

func validateChoices(doc *yamldoc.Doc, p string, q *Question) []error {
	var errs []error
	add := func(p, f string, a ...any) { errs = append(errs, doc.Errorf(p, f, a...)) }
	if len(q.Choices) < 2 {
		add(p+".choices", "a %s question needs at least two choices", q.Type)
	}
	ids := map[string]bool{}
	for j, c := range q.Choices {
		cp := fmt.Sprintf("%s.choices[%d]", p, j)
		if !ValidID(c.ID) {
			add(cp+".id", "invalid choice id %q", c.ID)
		}
		if ids[c.ID] {
			add(cp+".id", "duplicate choice id %q", c.ID)
		}
		ids[c.ID] = true
		errs = append(errs, textErrors(doc, cp+".text", c.Text)...)
	}
	n := len(q.correctChoices())
	switch {
	case q.Type == Single && n != 1:
		add(p+".choices", "a single question needs exactly one correct choice, has %d", n)
	case q.Type == Multiple && n == 0:
		add(p+".choices", "a multiple question needs at least one correct choice")
	}
	return errs
}

func validateQuery(doc *yamldoc.Doc, p string, a *Query) []error {
	if a == nil {
		return []error{doc.Errorf(p, "a cluster question needs an answer query")}
	}
	var errs []error
	k, ok := LookupQuery(a.Query)
	if !ok {
		errs = append(errs, doc.Errorf(p+".query", "unknown query %q", a.Query))
	}
	if a.Cluster == "" {
		errs = append(errs, doc.Errorf(p+".cluster", "cluster is required"))
	}
	if ok && k.NeedsCondition && a.Condition == "" {
		errs = append(errs, doc.Errorf(p+".condition", "query %q needs a condition", a.Query))
	}
	if ok && !k.NeedsCondition && a.Condition != "" {
		errs = append(errs, doc.Errorf(p+".condition", "query %q takes no condition", a.Query))
	}
	return errs
}

func textErrors(doc *yamldoc.Doc, p string, t locale.Text) []error {
	var errs []error
	for _, l := range t.Missing() {
		errs = append(errs, doc.Errorf(p+"."+string(l), "missing %s text", l))
	}
	return errs
}
