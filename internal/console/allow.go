package console

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// Command is a command line the console accepted.
type Command struct {
	// Args are kubectl's arguments, as typed, without the leading kubectl.
	Args []string
	// Path names the command, e.g. ["rollout", "status"]; empty for kubectl
	// alone (which prints its help).
	Path []string
	// Stdin says the command reads the YAML editor's text (-f -, exec -i).
	Stdin bool
	// Follow says it runs until stopped (get -w, logs -f, rollout status,
	// wait): it gets the runner's longer time limit.
	Follow bool
}

// String is the command's name, such as "kubectl rollout status".
func (c *Command) String() string {
	return strings.Join(append([]string{"kubectl"}, c.Path...), " ")
}

// Policy is what a console may allow beyond the fixed allow-list.
type Policy struct {
	// Containers says the cluster's provider runs real containers, so that
	// exec and debug mean something; without it they are refused.
	Containers bool
}

var root = &verb{flags: globalFlags, subs: verbs(), subsRequired: true}

// Parse splits line (see Split) and checks it against the allow-list with
// the zero Policy.
func Parse(line string) (*Command, error) { return Policy{}.Parse(line) }

// Parse splits line (see Split), drops a leading "kubectl" or "k", and
// checks the command against the allow-list. A refusal is a *RefusedError
// whose message is one line for the learner.
func (p Policy) Parse(line string) (*Command, error) {
	words, err := Split(line)
	if err != nil {
		return nil, err
	}
	if words[0] == "kubectl" || words[0] == "k" {
		words = words[1:]
	}
	return p.check(words)
}

// check walks args as cobra and pflag would: flags anywhere, the first
// positional words naming the (sub)command.
func (p Policy) check(args []string) (*Command, error) {
	cmd := &Command{Args: args}
	node := root
	var typed []flag
	var positional []string
	for i := 0; i < len(args); {
		arg := args[i]
		switch {
		case arg == "--":
			if !node.dashdash {
				return nil, refuse(fmt.Sprintf("%s takes no command after --", cmd))
			}
			i = len(args)
		case strings.HasPrefix(arg, "-") && arg != "-":
			fs, n := readFlag(args[i:], node.flags, globalFlags)
			for _, f := range fs {
				if !f.known {
					return nil, unknownFlag(cmd, node, f)
				}
			}
			typed = append(typed, fs...)
			i += n
		default:
			i++
			sub, ok := node.subs[arg]
			if len(positional) == 0 && ok {
				node = sub
				cmd.Path = append(cmd.Path, arg)
				if err := p.usable(cmd, node); err != nil {
					return nil, err
				}
				continue
			}
			if node.subsRequired && len(positional) == 0 {
				return nil, unknownCommand(cmd, arg)
			}
			positional = append(positional, arg)
		}
	}
	if node == root && len(args) > 0 && !hasHelp(typed) {
		return nil, refuse("no command given: type a kubectl command, for example: kubectl get pods")
	}
	if node.subsRequired && node != root && !hasHelp(typed) {
		return nil, refuse(fmt.Sprintf("%s needs a subcommand: see %s --help", cmd, cmd))
	}
	for _, f := range typed {
		if err := checkFlag(cmd, node, f); err != nil {
			return nil, err
		}
	}
	if node.needsStdin != "" && !cmd.Stdin && !hasHelp(typed) {
		return nil, refuse(fmt.Sprintf("kubectl %s reads its YAML from the YAML editor: use kubectl %s -f -", node.needsStdin, node.needsStdin))
	}
	if node.follow != nil {
		cmd.Follow = node.follow(typed)
	}
	return cmd, nil
}

// usable refuses a command the console never runs here.
func (p Policy) usable(cmd *Command, v *verb) error {
	if v.refused == "" || (v.containers && p.Containers) {
		return nil
	}
	return refuse(v.refused)
}

func unknownCommand(cmd *Command, arg string) error {
	if len(cmd.Path) == 0 {
		return refuse(fmt.Sprintf("unknown command %q: the console runs kubectl's own commands (see kubectl help); plugins are not available", arg))
	}
	return refuse(fmt.Sprintf("unknown subcommand %q for %s: see %s --help", arg, cmd, cmd))
}

// unknownFlag refuses a flag not in node's set: with a reason when the
// console refuses it on purpose, else as not allowed.
func unknownFlag(cmd *Command, node *verb, f flag) error {
	if msg, ok := node.refusedFlags[f.name()]; ok {
		return refuse(msg)
	}
	if msg, ok := refusedFlags[f.name()]; ok {
		return refuse(msg)
	}
	return refuse(fmt.Sprintf("flag %s is not allowed in the console for %s (see %s --help)", f.typed, cmd, cmd))
}

// checkFlag checks f against the final command and the values the console
// restricts.
func checkFlag(cmd *Command, node *verb, f flag) error {
	if _, ok := node.flags.long[f.spec.long]; !ok {
		if _, ok := globalFlags.long[f.spec.long]; !ok {
			return unknownFlag(cmd, node, f)
		}
	}
	switch f.spec.long {
	case "filename":
		if f.value != "-" {
			return refuse(fmt.Sprintf("%s %s: the console cannot read files on the server; put the YAML in the YAML editor and use -f -", f.typed, f.value))
		}
		cmd.Stdin = true
	case "stdin":
		if !f.hasValue || f.value == "true" {
			cmd.Stdin = true
		}
	case "output":
		return checkOutput(f.value)
	case "raw":
		if len(cmd.Path) != 1 || cmd.Path[0] != "get" {
			return refuse("--raw is allowed with kubectl get only")
		}
		return checkRaw(f.value)
	case "dry-run":
		if f.hasValue && f.value != "server" && f.value != "client" && f.value != "none" {
			return refuse(fmt.Sprintf("--dry-run=%s: use --dry-run=server, client or none", f.value))
		}
	case "v":
		if n, err := strconv.Atoi(f.value); err != nil || n < 0 || n > 10 {
			return refuse(fmt.Sprintf("-v=%s: give a log level from 0 to 10", f.value))
		}
	}
	return nil
}

func hasHelp(fs []flag) bool {
	for _, f := range fs {
		if f.spec.long == "help" {
			return true
		}
	}
	return false
}

// outputFormats are the -o formats the console accepts; the *-file
// formats, which read a template from the server's disk, are not among
// them.
var outputFormats = map[string]bool{
	"json": true, "yaml": true, "kyaml": true, "name": true, "wide": true,
	"go-template": true, "template": true, "jsonpath": true, "jsonpath-as-json": true,
	"custom-columns": true, "plaintext": true, "plaintext-openapiv2": true,
}

func checkOutput(value string) error {
	format, _, _ := strings.Cut(value, "=")
	if outputFormats[format] {
		return nil
	}
	switch format {
	case "go-template-file", "templatefile", "jsonpath-file", "custom-columns-file":
		inline := strings.TrimSuffix(strings.Replace(format, "templatefile", "go-template-file", 1), "-file")
		return refuse(fmt.Sprintf("-o %s reads a file on the server: give the template inline with -o %s='…'", format, inline))
	}
	return refuse(fmt.Sprintf("-o %s: use -o yaml, json, wide, name, jsonpath='…', custom-columns='…' or go-template='…'", value))
}

// rawRoots are the API server's own paths that get --raw may read.
var rawRoots = map[string]bool{
	"api": true, "apis": true, "healthz": true, "readyz": true, "livez": true, "version": true, "openapi": true,
}

// checkRaw accepts a path on the API server itself: no scheme, host or
// "..", under one of rawRoots, and not through the API server's proxy
// (which reaches pods, services and nodes over the network) or the
// streaming subresources.
func checkRaw(p string) error {
	usage := fmt.Sprintf("--raw %s: give a path on the API server, such as /api/v1/namespaces or /readyz?verbose", p)
	if !strings.HasPrefix(p, "/") || strings.HasPrefix(p, "//") || strings.Contains(p, `\`) {
		return refuse(usage)
	}
	u, err := url.Parse(p)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil {
		return refuse(usage)
	}
	if strings.Contains(p, "..") || strings.Contains(u.Path, "..") {
		return refuse(fmt.Sprintf("--raw %s: paths with .. are not allowed", p))
	}
	segs := strings.Split(strings.TrimPrefix(u.Path, "/"), "/")
	if !rawRoots[segs[0]] {
		return refuse(fmt.Sprintf("--raw %s: only the API server's paths are allowed (/api, /apis, /healthz, /readyz, /livez, /version, /openapi)", p))
	}
	for _, s := range segs {
		switch s {
		case "proxy", "exec", "attach", "portforward":
			return refuse(fmt.Sprintf("--raw %s: the API server's %s paths are not available in the console", p, s))
		}
	}
	return nil
}
