package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"oplab.dev/oplab/internal/app"
)

// config is every setting oplab takes from its environment, read here and
// nowhere below: the application layer and the libraries under it take
// them as fields of options structs (app.Config, webapp.ServerConfig; a
// guard test, TestOnlyTheCLIReadsTheEnvironment, holds them to it). Which variable sets which field, its flag, its default
// and its help line are one row each of settings, from which the flags,
// the help's Environment section and docs/serving.md's table are made.
type config struct {
	dataDir, binDir, providerName, store string

	kindNodeImage, kindConfig string

	podsKubeconfig, podsNamespace, podsImage, podsStorageClass, podsReach string

	// pprof is "1" to serve profiles.
	pprof string
	// cookieKey signs the server's cookies, shared by its replicas.
	cookieKey string
	// noColor, when not empty, keeps the terminal's output plain.
	noColor string
}

// lookupEnv reads one variable of the environment, as os.LookupEnv.
type lookupEnv func(name string) (string, bool)

// processEnv is this process's environment: Run reads it, tests give a
// lookupEnv of their own.
func processEnv(name string) (string, bool) { return os.LookupEnv(name) }

// setting is one row of oplab's configuration: a variable of the
// environment, the flag that overrides it where there is one, and what the
// help says of it.
type setting struct {
	// env names the variable.
	env string
	// flag names the persistent flag that overrides it; none for the
	// cookie key, which ps would show on a command line, nor for what only
	// scripts and the chart set.
	flag string
	// help says what the setting does, in the words of a flag's help.
	help string
	// unset says what holds when the variable is unset or empty.
	unset string
	// field is where the value goes.
	field func(*config) *string
	// fallback computes the value when the variable is unset or empty;
	// "" when nil.
	fallback func(lookupEnv) string
	// secret: the flag shows no default, so that help does not print the
	// variable's value (a URL with a password).
	secret bool
	// command names the only command that reads it; every command when
	// empty.
	command string
}

// settings are oplab's settings, in the order the help lists them.
func settings() []setting {
	return []setting{
		{env: "OPLAB_DATA", flag: "data-dir", help: "where clusters and state are kept",
			unset: "$XDG_DATA_HOME/oplab, else ~/.local/share/oplab",
			field: func(c *config) *string { return &c.dataDir }, fallback: defaultDataDir},
		{env: "OPLAB_BIN", flag: "bin-dir", help: "where the control-plane binaries are",
			unset: "the oplab executable's directory, where make puts them",
			field: func(c *config) *string { return &c.binDir }, fallback: func(lookupEnv) string { return defaultBinDir() }},
		{env: "OPLAB_PROVIDER", flag: "provider",
			help:  fmt.Sprintf("cluster provider: %s, %s or %s", app.Embedded, app.Kind, app.Pods),
			unset: app.Embedded,
			field: func(c *config) *string { return &c.providerName }, fallback: func(lookupEnv) string { return app.Embedded }},
		{env: "OPLAB_STORE_URL", flag: "store", secret: true,
			help:  "a postgres:// URL of a PostgreSQL store that several servers share",
			unset: "the SQLite file in the data directory",
			field: func(c *config) *string { return &c.store }},
		{env: app.KindNodeImageEnv, help: "the node image of kind clusters",
			unset: "the one make images builds, " + app.KindOfflineNodeImage + ", when the engine has it, else the upstream kindest/node pinned by digest",
			field: func(c *config) *string { return &c.kindNodeImage }},
		{env: "OPLAB_KIND_CONFIG", help: "the kind cluster config every kind cluster's config starts from, where a machine needs one (hack/kind/env.sh prints it)",
			unset: "none",
			field: func(c *config) *string { return &c.kindConfig }},
		{env: app.PodsKubeconfigEnv, help: "the kubeconfig of the host cluster the pods provider makes cells in",
			unset: "the pod's own ServiceAccount when oplab runs in a pod, else $KUBECONFIG",
			field: func(c *config) *string { return &c.podsKubeconfig }},
		{env: "OPLAB_PODS_NAMESPACE", help: "the host cluster's namespace of the cells",
			unset: "the pod's own namespace, else " + app.DefaultPodsNamespace,
			field: func(c *config) *string { return &c.podsNamespace }},
		{env: "OPLAB_PODS_IMAGE", help: "the cells' image: oplab's, which carries cellpod and the control plane",
			unset: app.DefaultPodsImage,
			field: func(c *config) *string { return &c.podsImage }},
		{env: "OPLAB_PODS_STORAGE_CLASS", help: "the StorageClass of the cells' claims",
			unset: "the host cluster's default",
			field: func(c *config) *string { return &c.podsStorageClass }},
		{env: "OPLAB_PODS_REACH", help: fmt.Sprintf("how the server reaches the cells' API servers: %s or %s", app.PodsReachService, app.PodsReachPortForward),
			unset: fmt.Sprintf("%s in a pod ($KUBERNETES_SERVICE_HOST set), else %s", app.PodsReachService, app.PodsReachPortForward),
			field: func(c *config) *string { return &c.podsReach }, fallback: defaultPodsReach},
		{env: "OPLAB_PPROF", help: "1: new embedded clusters and their operators serve CPU and heap profiles",
			unset: "off",
			field: func(c *config) *string { return &c.pprof }},
		{env: "OPLAB_COOKIE_KEY", command: "serve", secret: true,
			help:  "the key that signs session cookies, 32 bytes or more: replicas given one key accept each other's cookies",
			unset: "a key kept in the data directory",
			field: func(c *config) *string { return &c.cookieKey }},
		{env: "NO_COLOR", help: "any value: print without colour (https://no-color.org)",
			unset: "colour on a terminal",
			field: func(c *config) *string { return &c.noColor }},
	}
}

// load reads every setting from env into c and binds the flags that
// override them to root, each with its variable in its help.
func (c *config) load(root *cobra.Command, env lookupEnv) {
	fs := root.PersistentFlags()
	for _, s := range settings() {
		v, _ := env(s.env)
		if v == "" && s.fallback != nil {
			v = s.fallback(env)
		}
		p := s.field(c)
		if s.flag == "" {
			*p = v
			continue
		}
		shown, usage := v, fmt.Sprintf("%s (env %s)", s.help, s.env)
		if s.secret {
			shown, usage = "", fmt.Sprintf("%s; %s when empty (env %s)", s.help, s.unset, s.env)
		}
		fs.StringVar(p, s.flag, shown, usage)
		// A flag given on the command line overwrites this value.
		*p = v
	}
}

// app is the application layer's configuration from c.
func (c *config) app() app.Config {
	return app.Config{
		DataDir: c.dataDir, BinDir: c.binDir, Provider: c.providerName, Store: c.store,
		KindNodeImage: c.kindNodeImage, KindConfig: c.kindConfig,
		Pods: app.PodsHost{
			Kubeconfig: c.podsKubeconfig, Namespace: c.podsNamespace, Image: c.podsImage,
			StorageClass: c.podsStorageClass, Reach: app.PodsReach(c.podsReach),
		},
		Profiling: c.pprof == "1",
	}
}

// style colours text written to w as c says.
func (c *config) style(w io.Writer) style { return newStyle(w, c.noColor != "") }

// envHelp is the help's Environment section for cmd: every variable the
// command reads, with its flag and its default.
func envHelp(cmd *cobra.Command) string {
	var b strings.Builder
	b.WriteString("\nEnvironment (a flag, where there is one, wins):\n")
	for _, s := range settings() {
		if s.command != "" && cmd.HasParent() && cmd.Name() != s.command {
			continue
		}
		help := s.help
		if s.flag != "" {
			help = "--" + s.flag + ": " + help
		}
		if s.command != "" {
			help = "oplab " + s.command + ": " + help
		}
		fmt.Fprintf(&b, "  %-26s %s (when unset: %s)\n", s.env, help, s.unset)
	}
	return b.String()
}

// envTable is the table of docs/serving.md: every variable, its flag, its
// default and what it does, in Markdown.
func envTable() string {
	var b strings.Builder
	b.WriteString("| Variable | Flag | When unset | What it sets |\n|---|---|---|---|\n")
	for _, s := range settings() {
		flag := ""
		if s.flag != "" {
			flag = "`--" + s.flag + "`"
		}
		help := s.help
		if s.command != "" {
			help = "`oplab " + s.command + "`: " + help
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", s.env, flag, s.unset, help)
	}
	return b.String()
}

// defaultDataDir is $XDG_DATA_HOME/oplab, else ~/.local/share/oplab.
func defaultDataDir(env lookupEnv) string {
	if d, _ := env("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "oplab")
	}
	if h, err := os.UserHomeDir(); err == nil {
		return filepath.Join(h, ".local", "share", "oplab")
	}
	return filepath.Join(os.TempDir(), "oplab")
}

// defaultBinDir is the directory of the oplab executable, where `make`
// puts the control-plane binaries beside it.
func defaultBinDir() string {
	exe, err := os.Executable()
	if err != nil {
		return "bin"
	}
	if real, err := filepath.EvalSymlinks(exe); err == nil {
		exe = real
	}
	return filepath.Dir(exe)
}

// defaultPodsReach is by Service where oplab runs in a pod of the host
// cluster (the kubelet sets $KUBERNETES_SERVICE_HOST in every pod), else
// by port forward.
func defaultPodsReach(env lookupEnv) string {
	if h, _ := env("KUBERNETES_SERVICE_HOST"); h != "" {
		return string(app.PodsReachService)
	}
	return string(app.PodsReachPortForward)
}
