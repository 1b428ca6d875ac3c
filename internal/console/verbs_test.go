package console

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"oplab.dev/oplab/internal/cluster/clustertest"
)

// helpFlag is a flag line of kubectl's help: "  -o, --output=”:".
var helpFlag = regexp.MustCompile(`^\s+(?:-(\w), )?--([\w-]+)=(.*):$`)

// TestAllowListMatchesKubectl keeps the allow-list honest against the
// kubectl it runs: every listed flag exists for its command (as its own
// or as one of kubectl's global flags, such as --as for auth can-i), with
// the same shorthand, and is a boolean exactly when kubectl's is.
func TestAllowListMatchesKubectl(t *testing.T) {
	kubectl := filepath.Join(clustertest.BinDir(t), "kubectl")
	var global map[string]flagSpec
	check := func(path []string, fs flagSet) {
		args := append(slices.Clone(path), "--help")
		if len(path) == 0 {
			args = []string{"options"}
		}
		out, err := exec.Command(kubectl, args...).Output()
		if err != nil {
			t.Errorf("kubectl %s: %v", strings.Join(args, " "), err)
			return
		}
		known := map[string]flagSpec{}
		if len(path) == 0 {
			global = known
		}
		for _, line := range strings.Split(string(out), "\n") {
			m := helpFlag.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			kind := valueFlag
			if m[3] == "true" || m[3] == "false" {
				kind = boolFlag
			}
			known[m[2]] = flagSpec{long: m[2], short: m[1], kind: kind}
		}
		name := "kubectl " + strings.Join(path, " ")
		for long, spec := range fs.long {
			if long == "help" {
				continue
			}
			k, ok := known[long]
			if !ok {
				k, ok = global[long]
			}
			switch {
			case !ok:
				t.Errorf("%s: --%s is allowed but kubectl has no such flag", name, long)
			case k.short != spec.short:
				t.Errorf("%s --%s: shorthand got %q, kubectl has %q", name, long, spec.short, k.short)
			case (k.kind == boolFlag) != (spec.kind == boolFlag):
				t.Errorf("%s --%s: boolean got %v, kubectl has %v", name, long, spec.kind == boolFlag, k.kind == boolFlag)
			}
		}
	}
	check(nil, globalFlags)
	seen := map[*verb]bool{}
	var walkTree func(path []string, v *verb)
	walkTree = func(path []string, v *verb) {
		if seen[v] || (v.refused != "" && !v.containers) {
			return
		}
		seen[v] = true
		if len(path) > 0 {
			check(path, v.flags)
		}
		for name, sub := range v.subs {
			walkTree(append(slices.Clone(path), name), sub)
		}
	}
	walkTree(nil, root)
}
