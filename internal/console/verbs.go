package console

// The allow-list: kubectl's subcommands the console runs and, for each, the
// flags it accepts. Anything not listed here is refused, so a kubectl
// release that adds a flag adds nothing to the console until it is listed.
// Flags that touch the server's files, network or other clusters are never
// listed (see refusedFlags); they are refused with a message of their own.

// verb is one kubectl command (or subcommand) the console knows.
type verb struct {
	flags flagSet
	// subs are its subcommands; subsRequired says one must be given.
	subs         map[string]*verb
	subsRequired bool
	// refused, when set, is why the console never runs it.
	refused string
	// containers marks commands that need a provider that runs containers.
	containers bool
	// dashdash accepts "--" followed by a command for a container.
	dashdash bool
	// needsStdin says the command needs -f - (the editor's YAML).
	needsStdin string
	// follow reports whether the command runs until stopped.
	follow func(flags []flag) bool
	// refusedFlags gives specific messages for flags this verb refuses.
	refusedFlags map[string]string
}

const (
	printFlags  = "o|output= template= allow-missing-template-keys show-managed-fields"
	fileFlags   = "f|filename= R|recursive"
	selectFlags = "l|selector= field-selector= A|all-namespaces"
	writeFlags  = "dry-run? field-manager= " + printFlags
)

// globalFlags are kubectl's persistent flags the console accepts anywhere.
// Impersonation is not among them: a learner acts as themselves (on kind,
// through an identity held back from the node by policy), and a command
// run as someone else would be the learner's own powers read through
// another name. Only kubectl auth can-i takes --as and --as-group (see
// verbs), where it changes nothing: the lessons ask whether the operator's
// ServiceAccount may do something with
// `kubectl auth can-i --as=system:serviceaccount:…`.
var globalFlags = parseFlags("n|namespace= request-timeout= v|v= warnings-as-errors match-server-version disable-compression h|help")

func flags(specs ...string) flagSet { return parseFlags(specs...) }

func watching(names ...string) func([]flag) bool {
	return func(fs []flag) bool {
		for _, f := range fs {
			for _, n := range names {
				if f.spec.long == n && (!f.hasValue || f.value != "false") {
					return true
				}
			}
		}
		return false
	}
}

func always([]flag) bool { return true }

// rolloutStatus follows unless --watch=false.
func rolloutStatus(fs []flag) bool {
	for _, f := range fs {
		if f.spec.long == "watch" && f.hasValue && f.value == "false" {
			return false
		}
	}
	return true
}

const (
	noTerminal = "needs a terminal, which the console does not have"
	yamlEditor = "kubectl edit needs a terminal editor: open the object in the YAML editor (or kubectl get -o yaml), change it there and apply it"
)

var rolloutFlags = "l|selector= " + fileFlags

func createSub(specs ...string) *verb {
	return &verb{flags: flags(append([]string{writeFlags, "save-config validate?"}, specs...)...)}
}

func createWithCommand(specs ...string) *verb {
	v := createSub(specs...)
	v.dashdash = true
	return v
}

func alias(m map[string]*verb, name string, names ...string) {
	for _, n := range names {
		m[n] = m[name]
	}
}

func createSubs() map[string]*verb {
	m := map[string]*verb{
		"namespace":           createSub(),
		"deployment":          createWithCommand("image= replicas= r|replicas= port="),
		"serviceaccount":      createSub(),
		"configmap":           createSub("from-literal= append-hash"),
		"role":                createSub("verb= resource= resource-name="),
		"clusterrole":         createSub("verb= resource= resource-name= non-resource-url= aggregation-rule="),
		"rolebinding":         createSub("role= clusterrole= user= group= serviceaccount="),
		"clusterrolebinding":  createSub("clusterrole= user= group= serviceaccount="),
		"quota":               createSub("hard= scopes="),
		"job":                 createWithCommand("image= from="),
		"cronjob":             createWithCommand("image= schedule= restart="),
		"poddisruptionbudget": createSub("selector= min-available= max-unavailable="),
		"priorityclass":       createSub("value= global-default description= preemption-policy="),
		"token": {flags: flags(printFlags,
			"audience= duration= bound-object-kind= bound-object-name= bound-object-uid=")},
		"service": {subsRequired: true, subs: map[string]*verb{
			"clusterip":    createSub("tcp= clusterip="),
			"nodeport":     createSub("tcp= node-port="),
			"loadbalancer": createSub("tcp="),
			"externalname": createSub("tcp= external-name="),
		}},
		"secret": {subsRequired: true, subs: map[string]*verb{
			"generic":         createSub("from-literal= type= append-hash"),
			"docker-registry": createSub("docker-server= docker-username= docker-password= docker-email= append-hash"),
			"tls":             {refused: "kubectl create secret tls reads certificate files on the server: write the Secret in the YAML editor and use kubectl apply -f -"},
		}},
	}
	alias(m, "namespace", "ns")
	alias(m, "deployment", "deploy")
	alias(m, "serviceaccount", "sa")
	alias(m, "configmap", "cm")
	alias(m, "quota", "resourcequota")
	alias(m, "poddisruptionbudget", "pdb")
	alias(m, "priorityclass", "pc")
	alias(m, "service", "svc")
	alias(m, "cronjob", "cj")
	return m
}

func setSubs() map[string]*verb {
	common := "all local " + writeFlags + " " + fileFlags
	m := map[string]*verb{
		"image":          {flags: flags(common, "l|selector=")},
		"env":            {flags: flags(common, "l|selector= e|env= from= c|containers= list resolve keys= prefix= overwrite")},
		"resources":      {flags: flags(common, "l|selector= c|containers= limits= requests=")},
		"selector":       {flags: flags(common, "resource-version=")},
		"serviceaccount": {flags: flags(common)},
		"subject":        {flags: flags(common, "l|selector= user= group= serviceaccount=")},
	}
	alias(m, "serviceaccount", "sa")
	return m
}

// verbs is kubectl's command tree as far as the console runs it.
func verbs() map[string]*verb {
	get := &verb{
		flags: flags(printFlags, selectFlags, fileFlags,
			"w|watch watch-only output-watch-events sort-by= L|label-columns= show-labels show-kind no-headers chunk-size= ignore-not-found raw= subresource= server-print"),
		follow: watching("watch", "watch-only"),
	}
	noContainers := "is not available: this lab's cluster runs no containers (its pods are simulated)"
	m := map[string]*verb{
		"get":      get,
		"describe": {flags: flags(fileFlags, "l|selector= A|all-namespaces show-events chunk-size=")},
		"logs": {
			flags:  flags("f|follow c|container= all-containers p|previous tail= since= since-time= timestamps l|selector= prefix max-log-requests= limit-bytes= pod-running-timeout= ignore-errors all-pods"),
			follow: watching("follow"),
		},
		"explain":       {flags: flags("R|recursive api-version= o|output=")},
		"api-resources": {flags: flags("namespaced api-group= verbs= o|output= sort-by= cached no-headers categories=")},
		"api-versions":  {},
		"version":       {flags: flags("client o|output=")},
		"cluster-info": {subs: map[string]*verb{
			"dump": {refused: "kubectl cluster-info dump is not available in the console: use get, describe and logs"},
		}},
		"top": {subsRequired: true, subs: map[string]*verb{
			"pod":  {flags: flags("containers l|selector= field-selector= A|all-namespaces sort-by= no-headers sum use-protocol-buffers")},
			"node": {flags: flags("l|selector= sort-by= no-headers show-capacity use-protocol-buffers")},
		}},
		"events": {
			flags:  flags(printFlags, "A|all-namespaces chunk-size= for= types= w|watch no-headers"),
			follow: watching("watch"),
		},
		"apply": {
			flags:      flags(writeFlags, fileFlags, "l|selector= server-side force-conflicts validate? overwrite force grace-period= timeout= wait cascade?"),
			needsStdin: "apply",
			subs: map[string]*verb{
				"view-last-applied": {flags: flags("o|output= all l|selector= " + fileFlags)},
				"edit-last-applied": {refused: yamlEditor},
				"set-last-applied":  {refused: "kubectl apply set-last-applied is not available in the console: use kubectl apply -f - with the YAML editor"},
			},
			refusedFlags: map[string]string{"prune": "kubectl apply --prune is not available in the console: delete objects with kubectl delete"},
		},
		"create": {
			flags:        flags(writeFlags, fileFlags, "save-config validate?"),
			needsStdin:   "create",
			subs:         createSubs(),
			refusedFlags: map[string]string{"edit": yamlEditor},
		},
		"replace": {
			flags:      flags(writeFlags, fileFlags, "force grace-period= timeout= wait cascade? validate? save-config"),
			needsStdin: "replace",
		},
		"delete": {
			flags: flags(selectFlags, fileFlags, "all grace-period= force now wait timeout= cascade? dry-run? ignore-not-found o|output="),
			refusedFlags: map[string]string{
				"i": "kubectl delete -i asks for confirmation on a terminal, which the console does not have",
			},
		},
		"patch": {
			flags:        flags(writeFlags, fileFlags, "p|patch= type= local subresource="),
			refusedFlags: map[string]string{"patch-file": "--patch-file reads a file on the server: give the patch inline with -p '…'"},
		},
		"edit":     {refused: yamlEditor},
		"scale":    {flags: flags(printFlags, fileFlags, "replicas= current-replicas= resource-version= l|selector= all timeout= dry-run?")},
		"label":    {flags: flags(writeFlags, fileFlags, selectFlags, "overwrite all resource-version= list local")},
		"annotate": {flags: flags(writeFlags, fileFlags, selectFlags, "overwrite all resource-version= list local")},
		"rollout": {subsRequired: true, subs: map[string]*verb{
			"status":  {flags: flags(rolloutFlags, "w|watch revision= timeout="), follow: rolloutStatus},
			"history": {flags: flags(rolloutFlags, printFlags, "revision=")},
			"restart": {flags: flags(rolloutFlags, printFlags, "field-manager=")},
			"undo":    {flags: flags(rolloutFlags, printFlags, "dry-run? to-revision=")},
			"pause":   {flags: flags(rolloutFlags, printFlags, "field-manager=")},
			"resume":  {flags: flags(rolloutFlags, printFlags, "field-manager=")},
		}},
		"set": {subsRequired: true, subs: setSubs()},
		"auth": {subsRequired: true, subs: map[string]*verb{
			"can-i":     {flags: flags("A|all-namespaces list no-headers q|quiet subresource= as= as-group=")},
			"whoami":    {flags: flags(printFlags)},
			"reconcile": {flags: flags(printFlags, fileFlags, "remove-extra-permissions remove-extra-subjects dry-run?"), needsStdin: "auth reconcile"},
		}},
		"diff": {
			flags:        flags(fileFlags, "server-side force-conflicts field-manager= concurrency= l|selector= show-managed-fields"),
			needsStdin:   "diff",
			refusedFlags: map[string]string{"prune": "kubectl diff --prune is not available in the console"},
		},
		"wait": {
			flags:  flags(printFlags, selectFlags, fileFlags, "for= timeout= all local"),
			follow: always,
		},
		"expose":    {flags: flags(writeFlags, fileFlags, "port= target-port= name= type= protocol= selector= l|labels= cluster-ip= external-ip= load-balancer-ip= session-affinity= override-type= overrides= save-config")},
		"autoscale": {flags: flags(writeFlags, fileFlags, "min= max= name= save-config")},
		"cordon":    {flags: flags("l|selector= dry-run?")},
		"uncordon":  {flags: flags("l|selector= dry-run?")},
		"drain":     {flags: flags("l|selector= pod-selector= force ignore-daemonsets delete-emptydir-data grace-period= timeout= disable-eviction skip-wait-for-delete-timeout= chunk-size= dry-run?")},
		"taint":     {flags: flags(writeFlags, "overwrite all l|selector= validate?")},
		"run": {
			flags:    flags(writeFlags, "image= port= env= l|labels= restart= command overrides= annotations= expose image-pull-policy= save-config pod-running-timeout= privileged"),
			dashdash: true,
			refusedFlags: map[string]string{
				"i": "kubectl run -i/-t/--attach " + noTerminal + ": run it without them and read its output with kubectl logs",
			},
		},
		"exec": {
			flags:      flags("c|container= i|stdin q|quiet pod-running-timeout="),
			containers: true, dashdash: true, refused: "kubectl exec " + noContainers,
			refusedFlags: map[string]string{"t": "kubectl exec -t " + noTerminal + ": run it without -t"},
		},
		"debug": {
			flags:      flags("image= c|container= target= profile= copy-to= replace same-node share-processes set-image= env= arguments-only image-pull-policy= i|stdin q|quiet keep-annotations keep-labels keep-liveness keep-readiness keep-startup keep-init-containers"),
			containers: true, dashdash: true, refused: "kubectl debug " + noContainers,
			refusedFlags: map[string]string{
				"t":      "kubectl debug -t " + noTerminal + ": run it without -t and read its output with kubectl logs",
				"custom": "kubectl debug --custom reads a file on the server: not available in the console",
			},
		},
		"help":    {},
		"options": {},

		"attach":       {refused: "kubectl attach " + noTerminal + ": read a pod's output with kubectl logs -f"},
		"cp":           {refused: "kubectl cp copies files to and from the server: not available in the console"},
		"proxy":        {refused: "kubectl proxy opens a port on the server: not available in the console; use kubectl get --raw /api/…"},
		"port-forward": {refused: "kubectl port-forward opens a port on the server: not available in the console"},
		"plugin":       {refused: "kubectl plugins are not available in the console"},
		"config":       {refused: "kubectl config is not available: the console is already connected to your lab cluster"},
		"completion":   {refused: "kubectl completion is for shells: the console completes with the Tab key"},
		"alpha":        {refused: "kubectl alpha commands are not available in the console"},
		"kustomize":    {refused: "kubectl kustomize reads a directory on the server: not available in the console"},
		"kuberc":       {refused: "kubectl kuberc writes preferences on the server: not available in the console"},
		"certificate":  {refused: "kubectl certificate is not available in the console"},
	}
	// Short forms kubectl documents for these commands.
	alias(m["top"].subs, "pod", "pods", "po")
	alias(m["top"].subs, "node", "nodes", "no")
	for _, n := range []string{"stdin", "tty", "attach", "rm", "t"} {
		m["run"].refusedFlags[n] = m["run"].refusedFlags["i"]
	}
	m["exec"].refusedFlags["tty"] = m["exec"].refusedFlags["t"]
	for _, n := range []string{"tty", "attach"} {
		m["debug"].refusedFlags[n] = m["debug"].refusedFlags["t"]
	}
	m["delete"].refusedFlags["interactive"] = m["delete"].refusedFlags["i"]
	return m
}

// refusedFlags are flags refused for every command, by long name or
// shorthand, with the reason the learner sees.
var refusedFlags = func() map[string]string {
	own := "the console always talks to your own lab cluster with your own credentials"
	m := map[string]string{
		"kubeconfig":     "--kubeconfig is not available: " + own,
		"filename":       "", // -f: only "-" is accepted, checked with the value
		"kustomize":      "-k/--kustomize reads a directory on the server: put the YAML in the YAML editor and use -f -",
		"from-file":      "--from-file reads files on the server: use --from-literal=key=value, or write the object in the YAML editor",
		"from-env-file":  "--from-env-file reads a file on the server: use --from-literal=key=value",
		"cache-dir":      "--cache-dir is not available: the console does not write files on the server",
		"kuberc":         "--kuberc is not available: the console does not read files on the server",
		"profile":        "--profile is not available in the console",
		"profile-output": "--profile-output is not available: the console does not write files on the server",
		"patch-file":     "--patch-file reads a file on the server: give the patch inline with -p '…'",
		"raw":            "--raw is allowed with kubectl get only",
	}
	for _, n := range []string{"server", "token", "context", "cluster", "user", "username", "password",
		"certificate-authority", "client-certificate", "client-key", "insecure-skip-tls-verify", "tls-server-name"} {
		m[n] = "--" + n + " is not available: " + own
	}
	for _, n := range []string{"as", "as-group"} {
		m[n] = "--" + n + " is allowed with kubectl auth can-i only, after it: kubectl auth can-i VERB RESOURCE --" + n + "=NAME"
	}
	for _, n := range []string{"as-uid", "as-user-extra"} {
		m[n] = "--" + n + " is not available: " + own
	}
	m["s"] = m["server"]
	m["k"] = m["kustomize"]
	delete(m, "filename")
	return m
}()
