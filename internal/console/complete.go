package console

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
)

// typesTTL is how long a session's resource types are reused: long enough
// that Tab is quick, short enough that a CRD the learner applies shows up.
const typesTTL = time.Minute

// completeTimeout bounds one question to the cluster: Tab must answer fast
// or not at all.
const completeTimeout = 10 * time.Second

// Completer completes console lines for one session. It caches the
// cluster's resource types (from kubectl api-resources, run through the
// runner like any command) and asks for object names on each call. Safe for
// concurrent use.
type Completer struct {
	r      *Runner
	target Target

	mu      sync.Mutex
	types   []string
	typesAt time.Time
}

// Completer returns a completer for the session of t: its questions to
// the cluster count among t.Owner's commands (Options.Limits) and run as
// its commands do.
func (r *Runner) Completer(t Target) *Completer {
	return &Completer{r: r, target: t}
}

// Completion is the words that may replace the end of a line from byte
// offset From: the word under the cursor, or nothing after a blank.
type Completion struct {
	From       int      `json:"from"`
	Candidates []string `json:"candidates"`
}

// Complete completes line (the cursor at its end) with kubectl's verbs and
// subcommands, flags, resource types from the cluster's discovery and
// object names from the cluster. A line it cannot read completes to
// nothing, and so does a question its owner's caps leave no room for (Tab
// while the learner's commands fill them); an error is returned only when
// the cluster could not be asked.
func (c *Completer) Complete(ctx context.Context, line string) (Completion, error) {
	from := lastWordStart(line)
	partial := line[from:]
	comp := Completion{From: from, Candidates: []string{}}
	var words []string
	if strings.TrimSpace(line[:from]) != "" {
		w, err := Split(line[:from])
		if err != nil {
			return comp, nil
		}
		words = w
	}
	if len(words) > 0 && (words[0] == "kubectl" || words[0] == "k") {
		words = words[1:]
	} else if len(words) == 0 && (partial == "kubectl" || partial == "k") {
		return comp, nil
	}
	cands, err := c.candidates(ctx, walk(words), partial)
	if errors.Is(err, ErrTooMany) {
		return comp, nil
	}
	comp.Candidates = withPrefix(cands, partial)
	return comp, err
}

// lastWordStart is where the word under the cursor begins: after the last
// blank that is not inside quotes.
func lastWordStart(line string) int {
	start, quote := 0, rune(0)
	for i, ch := range line {
		switch {
		case quote != 0:
			if ch == quote {
				quote = 0
			}
		case ch == '\'' || ch == '"':
			quote = ch
		case ch == ' ' || ch == '\t':
			start = i + 1
		}
	}
	return start
}

// position is where in the command tree the words before the cursor are.
type position struct {
	node       *verb
	path       []string
	positional []string
	lastFlag   *flag // a flag still waiting for its value
	namespace  string
}

func walk(words []string) position {
	pos := position{node: root}
	for i := 0; i < len(words); i++ {
		w := words[i]
		if strings.HasPrefix(w, "-") && w != "-" {
			fs, n := readFlag(words[i:], pos.node.flags, globalFlags)
			for _, f := range fs {
				if f.spec.long == "namespace" && f.hasValue {
					pos.namespace = f.value
				}
			}
			if last := fs[len(fs)-1]; last.spec.kind == valueFlag && !last.hasValue {
				pos.lastFlag = &last
			}
			i += n - 1
			continue
		}
		if sub, ok := pos.node.subs[w]; ok && len(pos.positional) == 0 {
			pos.node, pos.path = sub, append(pos.path, w)
			continue
		}
		pos.positional = append(pos.positional, w)
	}
	return pos
}

func (c *Completer) candidates(ctx context.Context, pos position, partial string) ([]string, error) {
	switch {
	case pos.lastFlag != nil:
		return c.flagValues(ctx, pos.lastFlag.spec.long)
	case strings.HasPrefix(partial, "-"):
		return flagNames(pos.node), nil
	case len(pos.node.subs) > 0 && len(pos.positional) == 0:
		return c.subNames(pos.node), nil
	}
	want := objectArgs(pos.path)
	if want == "" {
		return nil, nil
	}
	if kind, _, ok := strings.Cut(partial, "/"); ok {
		names, err := c.names(ctx, kind, pos.namespace)
		return prefixAll(kind+"/", names), err
	}
	switch {
	case want == "types" && len(pos.positional) == 0:
		return c.resourceTypes(ctx)
	case want == "types" && len(pos.positional) == 1 && !strings.Contains(pos.positional[0], "/"):
		return c.names(ctx, pos.positional[0], pos.namespace)
	case want != "types" && len(pos.positional) == 0:
		return c.names(ctx, want, pos.namespace)
	}
	return nil, nil
}

// objectArgs says what a command's positional words are: "types" (a type,
// then names of it) or the one type whose names it takes; "" for none.
func objectArgs(path []string) string {
	switch strings.Join(path, " ") {
	case "get", "describe", "delete", "label", "annotate", "patch", "scale", "wait", "explain",
		"rollout status", "rollout history", "rollout restart", "rollout undo", "rollout pause", "rollout resume",
		"set image", "set env", "set resources", "set selector", "set serviceaccount", "set subject",
		"expose", "autoscale":
		return "types"
	case "logs", "exec", "debug", "top pod", "top pods", "top po":
		return "pods"
	case "top node", "top nodes", "top no", "cordon", "uncordon", "drain", "taint":
		return "nodes"
	}
	return ""
}

func (c *Completer) subNames(v *verb) []string {
	var out []string
	for name, sub := range v.subs {
		if c.r.opts.Policy.usable(&Command{}, sub) == nil {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

func flagNames(v *verb) []string {
	var out []string
	for _, fs := range []flagSet{v.flags, globalFlags} {
		for name := range fs.long {
			out = append(out, "--"+name)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func (c *Completer) flagValues(ctx context.Context, long string) ([]string, error) {
	switch long {
	case "namespace":
		return c.names(ctx, "namespaces", "")
	case "output":
		return []string{"custom-columns=", "go-template=", "json", "jsonpath=", "name", "wide", "yaml"}, nil
	case "dry-run":
		return []string{"client", "none", "server"}, nil
	}
	return nil, nil
}

// resourceTypes are the cluster's resource types, each by its plural name
// and, for groups other than the core, by its full name.
func (c *Completer) resourceTypes(ctx context.Context) ([]string, error) {
	c.mu.Lock()
	if c.types != nil && time.Since(c.typesAt) < typesTTL {
		defer c.mu.Unlock()
		return c.types, nil
	}
	c.mu.Unlock()
	out, err := c.query(ctx, "api-resources", "-o", "name")
	if err != nil {
		return nil, err
	}
	var types []string
	for _, name := range out {
		plural, _, _ := strings.Cut(name, ".")
		types = append(types, plural, name)
	}
	slices.Sort(types)
	types = slices.Compact(types)
	c.mu.Lock()
	c.types, c.typesAt = types, time.Now()
	c.mu.Unlock()
	return types, nil
}

// names are the objects of kind (in namespace when given), as kubectl get
// -o name lists them, without their type.
func (c *Completer) names(ctx context.Context, kind, namespace string) ([]string, error) {
	args := []string{"get", kind, "-o", "name"}
	if namespace != "" {
		args = append(args, "-n", namespace)
	}
	out, err := c.query(ctx, args...)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(out))
	for _, line := range out {
		_, name, _ := strings.Cut(line, "/")
		names = append(names, name)
	}
	return names, nil
}

// query runs kubectl with args through the allow-list and the runner, as
// a learner's command, and returns its stdout's lines.
func (c *Completer) query(ctx context.Context, args ...string) ([]string, error) {
	cmd, err := c.r.opts.Policy.check(args)
	if err != nil {
		return nil, err
	}
	if c.target.Owner == "" {
		return nil, errors.New("complete: no owner given")
	}
	release, err := c.r.limits.acquire(c.target.Owner, cmd.Follow)
	if err != nil {
		return nil, err
	}
	defer release()
	var stdout bytes.Buffer
	req := Request{Target: c.target, Output: func(ch Chunk) {
		if ch.Stream == Stdout {
			stdout.Write(ch.Data)
		}
	}}
	if err := c.r.checkInput(cmd, req); err != nil {
		return nil, err
	}
	_, err = c.r.exec(ctx, cmd, req, min(c.r.opts.Timeout, completeTimeout))
	var exit *ExitError
	switch {
	case errors.As(err, &exit) && stdout.Len() > 0:
		// kubectl api-resources exits 1 when one API group cannot be read
		// (an aggregated API that is down) after listing the others.
	case err != nil:
		return nil, fmt.Errorf("complete with %s: %w", cmd, err)
	}
	return strings.Fields(stdout.String()), nil
}

func withPrefix(cands []string, partial string) []string {
	out := []string{}
	for _, s := range cands {
		if strings.HasPrefix(s, partial) {
			out = append(out, s)
		}
	}
	return out
}

func prefixAll(prefix string, names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = prefix + n
	}
	return out
}
