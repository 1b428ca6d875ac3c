package lab

import (
	"fmt"

	"oplab.dev/oplab/internal/yamldoc"
)

// Parse decodes and validates one lab file on its own: its fields, kinds,
// parameters and patterns, but not its references to lesson pages and
// quizzes (see ValidateDir). Every error is a *yamldoc.Error. The lab is
// returned only when there are no errors; its steps and checks then carry
// typed Params with defaults filled in.
func Parse(file string, data []byte) (*Lab, []error) {
	l, _, errs := parse(file, data)
	return l, errs
}

func parse(file string, data []byte) (*Lab, *yamldoc.Doc, []error) {
	doc, err := yamldoc.Parse(file, data)
	if err != nil {
		return nil, nil, []error{err}
	}
	var l Lab
	if errs := doc.Decode(&l); len(errs) > 0 {
		return nil, doc, errs
	}
	v := &validator{doc: doc, l: &l}
	v.validateLab()
	if len(v.errs) > 0 {
		return nil, doc, v.errs
	}
	return &l, doc, nil
}

// decodeParams decodes the params of a step or check of the given spec.
func (v *validator) decodeParams(p string, spec KindSpec, raw *yamlNode) any {
	params := spec.New()
	if raw.Kind != 0 {
		if errs := v.doc.DecodeNode(raw, p+".params", params); len(errs) > 0 {
			v.errs = append(v.errs, errs...)
			return nil
		}
	}
	if t, ok := params.(targeted); ok {
		tg := t.target()
		if tg.Cluster == "" {
			tg.Cluster = v.l.Target.Cluster
		}
		if tg.Namespace == "" {
			tg.Namespace = v.l.Target.Namespace
		}
		if o, ok := params.(clusterOptional); tg.Cluster == "" && !(ok && o.clusterOptional()) {
			v.add(p+".params.cluster", "no cluster: set params.cluster or the lab's target.cluster")
		}
	}
	if val, ok := params.(Validator); ok {
		for _, fe := range val.Validate() {
			fp := p + ".params"
			if fe.Field != "" {
				fp += "." + fe.Field
			}
			v.add(fp, "%s", fe.Msg)
		}
	}
	return params
}

func (v *validator) add(path, format string, args ...any) {
	v.errs = append(v.errs, v.doc.Errorf(path, format, args...))
}

// labFile is the name of lab id's file relative to the repository root.
func labFile(id string) string { return fmt.Sprintf("labs/%s/lab.yaml", id) }
