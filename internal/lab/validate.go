package lab

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"oplab.dev/oplab/internal/locale"
	"oplab.dev/oplab/internal/yamldoc"
)

type yamlNode = yaml.Node

var idRE = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?$`)

// Capabilities a lab may require of a cluster provider; the names are the
// JSON names of the cluster package's Capabilities fields.
var capabilities = []string{"realContainers", "loadImages", "disposable", "hostProcesses", "builds"}

var tiers = []string{TierNudge, TierWhere, TierCommand}

type validator struct {
	doc  *yamldoc.Doc
	l    *Lab
	errs []error
}

func (v *validator) validateLab() {
	l := v.l
	if l.APIVersion != APIVersion {
		v.add("apiVersion", "must be %q, got %q", APIVersion, l.APIVersion)
	}
	if l.Kind != Kind {
		v.add("kind", "must be %q, got %q", Kind, l.Kind)
	}
	v.id("id", l.ID)
	v.text("title", l.Title)
	v.text("summary", l.Summary)
	if len(l.Lesson) == 0 {
		v.add("lesson", "a lab needs at least one lesson page")
	}
	for i, page := range l.Lesson {
		v.id(fmt.Sprintf("lesson[%d]", i), page)
		if slices.Contains(l.Lesson[:i], page) {
			v.add(fmt.Sprintf("lesson[%d]", i), "page %q is listed twice", page)
		}
	}
	for i, c := range l.Requires {
		if !slices.Contains(capabilities, c) {
			v.add(fmt.Sprintf("requires[%d]", i), "unknown capability %q (known: %v)", c, capabilities)
		}
	}
	if l.Operator != "" && l.Operator != LearnerOperator {
		v.id("operator", l.Operator)
		if !slices.Contains(l.Requires, "realContainers") {
			v.add("operator", "a third-party operator runs on real containers only: add realContainers to requires")
		}
	}
	v.id("quiz", l.Quiz)
	v.steps("setup", l.Setup)
	if len(l.Exercises) == 0 {
		v.add("exercises", "a lab needs at least one exercise")
	}
	seen := map[string]bool{}
	for i := range l.Exercises {
		p := fmt.Sprintf("exercises[%d]", i)
		if seen[l.Exercises[i].ID] {
			v.add(p+".id", "duplicate exercise id %q", l.Exercises[i].ID)
		}
		seen[l.Exercises[i].ID] = true
		v.exercise(p, &l.Exercises[i])
	}
}

func (v *validator) exercise(p string, e *Exercise) {
	v.id(p+".id", e.ID)
	v.text(p+".title", e.Title)
	v.text(p+".instructions", e.Instructions)
	if e.TimeLimit.Duration <= 0 {
		v.add(p+".timeLimit", "a positive time limit is required")
	}
	v.checks(p+".steadyState", e.SteadyState, false)
	v.steps(p+".chaos", e.Chaos)
	v.checks(p+".faultConfirmed", e.FaultConfirmed, false)
	if len(e.Chaos) > 0 && len(e.SteadyState) == 0 {
		v.add(p+".steadyState", "an exercise with chaos needs a steady-state gate")
	}
	if len(e.Chaos) > 0 && len(e.FaultConfirmed) == 0 {
		v.add(p+".faultConfirmed", "an exercise with chaos needs checks that confirm the fault")
	}
	if len(e.Chaos) == 0 && len(e.FaultConfirmed) > 0 {
		v.add(p+".faultConfirmed", "there is no chaos to confirm")
	}
	if len(e.Goals) == 0 {
		v.add(p+".goals", "an exercise needs at least one goal")
	}
	v.checks(p+".goals", e.Goals, true)
	v.hints(p+".hints", e.Hints)
	if len(e.Solution) == 0 {
		v.add(p+".solution", "a reference solution is required for the self-test")
	}
	v.steps(p+".solution", e.Solution)
	v.steps(p+".before", e.Before)
	if len(e.Before) > 0 && len(e.Chaos) > 0 {
		v.add(p+".before", "an exercise with chaos starts from what its chaos breaks: before is for one without")
	}
	v.shortcuts(p+".shortcuts", e)
}

func (v *validator) shortcuts(p string, e *Exercise) {
	seen := map[string]bool{}
	for i := range e.Shortcuts {
		sp := fmt.Sprintf("%s[%d]", p, i)
		s := &e.Shortcuts[i]
		v.id(sp+".id", s.ID)
		if seen[s.ID] {
			v.add(sp+".id", "duplicate shortcut id %q", s.ID)
		}
		seen[s.ID] = true
		if s.Why == "" {
			v.add(sp+".why", "say what the shortcut does and why it must not pass")
		}
		if len(s.Steps) == 0 {
			v.add(sp+".steps", "a shortcut needs at least one step")
		}
		v.steps(sp+".steps", s.Steps)
		v.steps(sp+".undo", s.Undo)
		for j, k := range s.RefusedBy {
			if !slices.ContainsFunc(e.Goals, func(c Check) bool { return c.Kind == k }) {
				v.add(fmt.Sprintf("%s.refusedBy[%d]", sp, j), "%q is not the kind of a goal of this exercise", k)
			}
		}
	}
	v.quotaResources(p, e)
}

// quotaResources makes a quotaEnforced goal cover every resource the
// exercise's chaos puts in that quota: the quota must keep limiting what it
// limited.
func (v *validator) quotaResources(p string, e *Exercise) {
	for _, s := range e.Chaos {
		q, ok := s.Params.(*ApplyQuota)
		if !ok {
			continue
		}
		for i, g := range e.Goals {
			qe, ok := g.Params.(*QuotaEnforced)
			if !ok || qe.Name != q.Name || (cmp.Or(qe.Namespace, "default")) != q.Namespace {
				continue
			}
			for res := range q.Hard {
				if !slices.Contains(qe.Resources, res) {
					v.add(fmt.Sprintf("%s.goals[%d].params.resources", strings.TrimSuffix(p, ".shortcuts"), i), "the chaos's quota limits %s: list it, so that it must stay limited", res)
				}
			}
		}
	}
}

func (v *validator) steps(p string, steps []Step) {
	for i := range steps {
		sp := fmt.Sprintf("%s[%d]", p, i)
		s := &steps[i]
		spec, ok := LookupAction(s.Kind)
		if !ok {
			v.add(sp+".kind", "unknown action kind %q (known: %v)", s.Kind, names(actionKinds))
			continue
		}
		if s.Timeout.Duration < 0 {
			v.add(sp+".timeout", "must not be negative")
		}
		if s.Timeout.Duration == 0 {
			s.Timeout.Duration = spec.Timeout
		}
		s.Params = v.decodeParams(sp, spec, &s.Raw)
	}
}

func (v *validator) checks(p string, checks []Check, goals bool) {
	for i := range checks {
		cp := fmt.Sprintf("%s[%d]", p, i)
		c := &checks[i]
		spec, ok := LookupCheck(c.Kind)
		if !ok {
			v.add(cp+".kind", "unknown check kind %q (known: %v)", c.Kind, names(checkKinds))
			continue
		}
		if c.Timeout.Duration < 0 {
			v.add(cp+".timeout", "must not be negative")
		}
		if c.Timeout.Duration == 0 {
			c.Timeout.Duration = spec.Timeout
		}
		if c.Passes < 0 {
			v.add(cp+".passes", "must not be negative")
		}
		if c.Passes == 0 {
			c.Passes = spec.Passes
		}
		switch {
		case c.Weight < 0:
			v.add(cp+".weight", "must not be negative")
		case !goals && c.Weight != 0:
			v.add(cp+".weight", "only goals carry weights")
		case goals && c.Weight == 0:
			c.Weight = 1
		}
		if len(c.Explain.Missing()) == 1 {
			v.add(cp+".explain", "give the explanation in both languages")
		}
		c.Params = v.decodeParams(cp, spec, &c.Raw)
	}
}

func (v *validator) hints(p string, hints []Hint) {
	if len(hints) == 0 {
		v.add(p, "an exercise needs at least one hint")
	}
	last := -1
	for i, h := range hints {
		hp := fmt.Sprintf("%s[%d]", p, i)
		t := slices.Index(tiers, h.Tier)
		switch {
		case t < 0:
			v.add(hp+".tier", "unknown tier %q (want %v)", h.Tier, tiers)
		case i == 0 && h.Tier == TierCommand:
			v.add(hp+".tier", "the first hint must not give the command away")
		case t < last:
			v.add(hp+".tier", "tier %q comes after a more explicit hint", h.Tier)
		}
		last = max(last, t)
		if h.After.Duration <= 0 && len(h.When) == 0 {
			v.add(hp, "a hint needs a trigger: after, when, or both")
		}
		for j := range h.When {
			v.evidence(fmt.Sprintf("%s.when[%d]", hp, j), &h.When[j])
		}
		v.text(hp+".text", h.Text)
	}
}

func (v *validator) evidence(p string, ev *Evidence) {
	set := 0
	for _, f := range []struct {
		name, val string
		re        bool
	}{
		{"log", ev.Log, true}, {"eventReason", ev.EventReason, false}, {"eventMessage", ev.EventMessage, true},
	} {
		if f.val == "" {
			continue
		}
		set++
		if !f.re {
			continue
		}
		re, err := regexp.Compile(f.val)
		if err != nil {
			v.add(p+"."+f.name, "invalid regular expression: %v", err)
			continue
		}
		ev.re = re
	}
	if set != 1 {
		v.add(p, "set exactly one of log, eventReason, eventMessage")
	}
}

func (v *validator) id(p, s string) {
	if !idRE.MatchString(s) {
		v.add(p, "invalid id %q (lowercase letters, digits and dashes)", s)
	}
}

func (v *validator) text(p string, t locale.Text) {
	for _, l := range t.Missing() {
		v.add(p+"."+string(l), "missing %s text", l)
	}
}
