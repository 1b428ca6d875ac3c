package console

import (
	"regexp"
	"slices"
	"strings"
)

// Mask is what a secret value becomes in a redacted line.
const Mask = "***"

// secretRule says how much of a flag's value is secret.
type secretRule int

const (
	wholeValue  secretRule = iota // --token=***
	afterKey                      // --from-literal=key=***
	secretEnv                     // --env=PASSWORD=***, and only for names that look secret
	secretPatch                   // patch -p ***, when it patches a Secret
)

// secretFlags are kubectl's flags whose values carry a secret, by long
// name or shorthand as the flag sets spell them, from kubectl's own flag
// definitions (k8s.io/kubectl pkg/cmd/create, cli-runtime's ConfigFlags).
// The credential flags are refused by the console, but a refused line is
// recorded too, and a learner who pastes a token has still typed it.
var secretFlags = map[string]secretRule{
	"from-literal":    afterKey,   // create secret generic, create configmap
	"docker-password": wholeValue, // create secret docker-registry
	"token":           wholeValue,
	"password":        wholeValue,
	"client-key":      wholeValue,
	"env":             secretEnv, // run --env, set env -e
	"patch":           secretPatch,
}

// secretName matches environment variable names that hold credentials by
// custom: DB_PASSWORD, API_TOKEN, AWS_SECRET_ACCESS_KEY, PGPASS …
var secretName = regexp.MustCompile(`(?i)pass|pwd|secret|token|key|cred|auth|private`)

// Redact returns line with the secret values it carries replaced by Mask,
// and those values: --from-literal=key=VALUE keeps its key, the whole
// value of --docker-password, --token, --password and --client-key goes,
// as do environment values with credential names (run --env, set env, env
// in a container's command), the patch of a Secret and the password of a
// URL (postgresql://app:***@demo-rw/app). The rest of the line is left as
// typed; a word that changes is written again, quoted where it needs
// quotes.
//
// It reads the line as the console does (see Split) but never refuses
// one: lines with shell syntax, unbalanced quotes or flags the console
// refuses are redacted too, since they are recorded as well.
func Redact(line string) (string, []string) {
	words := scanWords(line)
	args := words
	if len(args) > 0 && (args[0].text == "kubectl" || args[0].text == "k") {
		args = args[1:]
	}
	r := newRedaction(args)
	r.read()
	if len(r.edits) == 0 {
		return line, nil
	}
	// Replace from the end so that the offsets before stay right.
	var b strings.Builder
	last := len(line)
	var parts []string
	for i := len(args) - 1; i >= 0; i-- {
		text, ok := r.edits[i]
		if !ok {
			continue
		}
		parts = append(parts, line[args[i].end:last], quoteWord(text))
		last = args[i].start
	}
	b.WriteString(line[:last])
	for i := len(parts) - 1; i >= 0; i-- {
		b.WriteString(parts[i])
	}
	return b.String(), r.secrets
}

// Scrub replaces every secret value in text (a refusal that quotes the
// line) with Mask. Values shorter than four bytes are left: replacing
// them everywhere would garble the message.
func Scrub(text string, secrets []string) string {
	for _, s := range secrets {
		if len(s) >= 4 {
			text = strings.ReplaceAll(text, s, Mask)
		}
	}
	return text
}

// redaction walks a command's words as check does (flags anywhere, the
// first positional words naming the command) and notes what to mask.
type redaction struct {
	args    []word
	texts   []string
	edits   map[int]string // word index -> its new text
	secrets []string

	path       []string
	positional []int
	patches    []valueAt // applied once the command's type is known
}

// valueAt is a flag's value in the words: the whole word at index, or the
// end of it (--flag=value, -pvalue).
type valueAt struct {
	index  int
	suffix bool
	value  string
}

func newRedaction(args []word) *redaction {
	texts := make([]string, len(args))
	for i, w := range args {
		texts[i] = w.text
	}
	return &redaction{args: args, texts: texts, edits: map[int]string{}}
}

func (r *redaction) read() {
	node := root
	for i := 0; i < len(r.texts); {
		t := r.texts[i]
		switch {
		case t == "--":
			// What follows is a container's command, not kubectl's:
			// only its NAME=value words (env PGPASSWORD=…) are read.
			for i++; i < len(r.texts); i++ {
				r.envWord(i)
			}
		case strings.HasPrefix(t, "-") && t != "-":
			i += r.flags(i, node)
		default:
			if sub, ok := node.subs[t]; ok && len(r.positional) == 0 {
				node = sub
				r.path = append(r.path, t)
			} else {
				r.positional = append(r.positional, i)
			}
			i++
		}
	}
	if slices.Equal(r.path, []string{"set", "env"}) {
		for _, i := range r.positional {
			r.envWord(i)
		}
	}
	if len(r.path) > 0 && r.path[0] == "patch" && r.patchesSecret() {
		for _, v := range r.patches {
			r.mask(v, "", v.value)
		}
	}
	for i := range r.texts {
		r.urlPassword(i)
	}
}

// envWord masks a NAME=value word whose name looks secret: an argument of
// kubectl set env, or of env in a container's command.
func (r *redaction) envWord(i int) {
	if key, value, ok := strings.Cut(r.texts[i], "="); ok && secretName.MatchString(key) {
		r.mask(valueAt{index: i, value: r.texts[i]}, key+"=", value)
	}
}

// urlPassword matches the password of a URL's user information:
// postgresql://app:PASSWORD@demo-rw/app.
var urlPassword = regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.-]*://[^:/@\s]*:)([^@/\s]+)@`)

// urlPassword masks the passwords of URLs in word i, wherever the word is:
// a connection string in a container's command or an environment value.
func (r *redaction) urlPassword(i int) {
	text := r.texts[i]
	if e, ok := r.edits[i]; ok {
		text = e
	}
	for _, m := range urlPassword.FindAllStringSubmatch(text, -1) {
		r.secrets = append(r.secrets, m[2])
	}
	if masked := urlPassword.ReplaceAllString(text, "${1}"+Mask+"@"); masked != text {
		r.edits[i] = masked
	}
}

// flags reads the flag word at i and returns how many words it used.
func (r *redaction) flags(i int, node *verb) int {
	fs, n := readFlag(r.texts[i:], node.flags, globalFlags)
	for k, f := range fs {
		rule, secret := secretFlags[f.name()]
		if !secret {
			continue
		}
		var v valueAt
		switch {
		case f.hasValue && n == 2 && k == len(fs)-1:
			v = valueAt{index: i + 1, value: f.value}
		case f.hasValue:
			v = valueAt{index: i, suffix: true, value: f.value}
		case !f.known && i+1 < len(r.texts):
			// A flag the console refuses reads no value, but kubectl
			// would take the next word as one: so does the learner.
			v, n = valueAt{index: i + 1, value: r.texts[i+1]}, 2
		default:
			continue
		}
		r.apply(rule, v)
	}
	return n
}

func (r *redaction) apply(rule secretRule, v valueAt) {
	switch rule {
	case wholeValue:
		r.mask(v, "", v.value)
	case afterKey:
		if key, value, ok := strings.Cut(v.value, "="); ok {
			r.mask(v, key+"=", value)
		} else {
			r.mask(v, "", v.value)
		}
	case secretEnv:
		if key, value, ok := strings.Cut(v.value, "="); ok && secretName.MatchString(key) {
			r.mask(v, key+"=", value)
		}
	case secretPatch:
		r.patches = append(r.patches, v)
	}
}

// patchesSecret reports whether a kubectl patch may change a Secret: its
// type names one, or it has no type to tell (patch -f -).
func (r *redaction) patchesSecret() bool {
	if len(r.positional) == 0 {
		return true
	}
	kind, _, _ := strings.Cut(strings.ToLower(r.texts[r.positional[0]]), "/")
	kind, _, _ = strings.Cut(kind, ".")
	return kind == "secret" || kind == "secrets"
}

// mask replaces value v in its word with keep and Mask, and notes secret,
// the part of the value that Mask hides. An empty secret hides nothing.
func (r *redaction) mask(v valueAt, keep, secret string) {
	if secret == "" {
		return
	}
	masked := keep + Mask
	if v.suffix {
		masked = strings.TrimSuffix(r.texts[v.index], v.value) + masked
	}
	r.edits[v.index] = masked
	r.secrets = append(r.secrets, secret)
}

// quoteWord writes a word so that the line reads as it ran: bare when it
// holds only characters no shell treats specially, else in '…'.
func quoteWord(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=,@%+*") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// word is one word of a line: where it is, and its text with quotes and
// backslashes applied.
type word struct {
	start, end int
	text       string
}

// scanWords splits line into words as Split does for the lines the
// console accepts, but accepts any line: shell operators end a word and
// are skipped, an unbalanced quote runs to the end of the line, and
// nothing is expanded.
func scanWords(line string) []word {
	var out []word
	for i := 0; i < len(line); {
		if separator(line[i]) {
			i++
			continue
		}
		start := i
		var b strings.Builder
		for i < len(line) && !separator(line[i]) {
			i = scanPart(line, i, &b)
		}
		out = append(out, word{start: start, end: i, text: b.String()})
	}
	return out
}

func separator(c byte) bool {
	return strings.IndexByte(" \t\n|;&<>()", c) >= 0
}

// scanPart reads one part of a word at i (a character, an escape or a
// quoted string) into b and returns where the next part starts.
func scanPart(line string, i int, b *strings.Builder) int {
	switch {
	case line[i] == '\\':
		if i+1 < len(line) && line[i+1] != '\n' {
			b.WriteByte(line[i+1])
		}
		return min(i+2, len(line))
	case line[i] == '\'':
		return quoted(line, i+1, '\'', nil, b)
	case line[i] == '"':
		return quoted(line, i+1, '"', func(c byte) bool { return strings.IndexByte("\"\\$`\n", c) >= 0 }, b)
	case strings.HasPrefix(line[i:], "$'"):
		// $'…': escapes such as \n are read as the letter; masking needs
		// where the word ends more than its exact text.
		return quoted(line, i+2, '\'', func(byte) bool { return true }, b)
	}
	b.WriteByte(line[i])
	return i + 1
}

// quoted reads a quoted string from i up to its closing quote (or the end
// of the line); within it a backslash escapes the characters escapes
// accepts (none when nil). An escaped new line joins the lines.
func quoted(line string, i int, quote byte, escapes func(byte) bool, b *strings.Builder) int {
	for i < len(line) {
		c := line[i]
		switch {
		case c == quote:
			return i + 1
		case c == '\\' && escapes != nil && i+1 < len(line) && escapes(line[i+1]):
			if line[i+1] != '\n' {
				b.WriteByte(line[i+1])
			}
			i += 2
			continue
		}
		b.WriteByte(c)
		i++
	}
	return i
}
