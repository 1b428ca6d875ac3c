package cli

import (
	"fmt"
	"net"
	"time"

	"github.com/spf13/cobra"

	"oplab.dev/oplab/internal/app"
	"oplab.dev/oplab/internal/app/webapp"
	"oplab.dev/oplab/internal/session"
)

func newServeCmd(g *globals) *cobra.Command {
	var (
		addr        string
		hosts       []string
		expire      session.ExpireOptions
		sleep       session.SleepOptions
		warm        app.PoolOptions
		admit       app.Admission
		buildBursts int
		limits      app.ConsoleLimits
		// insecure serves strangers even where their clusters cannot be
		// contained.
		insecure bool
		// lease names the Lease replicas elect their leader with.
		lease string
		// A cell's budget, as written on the command line.
		cellMemory, etcdQuota, cellCPU string
		cellTasks                      int64
		// publicURL is where learners reach the server through a proxy.
		publicURL string
	)
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Start the lab server",
		Long: `Start the lab server. It listens on 127.0.0.1 only, unless --addr says
otherwise, and prints a sign-in link with a one-time token: open it in a
browser. Labs started in the browser are the same sessions the lab
commands act on, so oplab lab check works on them too.

Each learner's cluster runs in a cell of its own (bubblewrap namespaces),
so that what a learner makes their cluster do cannot reach this machine,
and in a control group of its own with a budget (--cell-memory,
--cell-cpu, --cell-tasks, --etcd-quota), so that one learner cannot take the machine
from the others. Where cells or their groups cannot be made, oplab serve
says so and serves only this machine's own learner on loopback, without
classes, unless --insecure-clusters is given.

Session cookies are signed with a key kept in the data directory. Replicas
of one oplab (--leader-lease) share one key instead, given in the
environment as OPLAB_COOKIE_KEY (32 bytes or more; the chart gives it from
a Secret), so that any replica accepts a cookie another signed.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			ctx := cmd.Context()
			var leader *app.LeaderOptions
			if lease != "" {
				if leader, err = app.LeaderLease(lease); err != nil {
					return err
				}
			}
			c := g.appConfig()
			c.Admission, c.BuildBursts = admit, buildBursts
			if buildBursts <= 0 {
				c.BuildBursts = -1 // none; zero would be the default
			}
			if c.Budget, err = app.ParseBudget(cellMemory, cellTasks, etcdQuota, cellCPU); err != nil {
				return err
			}
			a, err := app.Open(ctx, c)
			if err != nil {
				return err
			}
			defer a.Close()
			serving, err := a.CheckServe(addr, insecure)
			if err != nil {
				return err
			}
			if serving.Warning != "" {
				fmt.Fprintln(cmd.ErrOrStderr(), serving.Warning)
			}
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return fmt.Errorf("listen on %s: %w", addr, err)
			}
			bound := ln.Addr().String()
			s, closeServer, err := webapp.NewServer(ctx, a, webapp.ServerConfig{BinDir: g.binDir, DataDir: g.dataDir,
				// Replicas share one key (see the chart); never a flag, which
				// ps shows.
				CookieKey: []byte(g.cookieKey),
				Hosts:     webapp.Hosts(bound, hosts...), PublicURL: publicURL, Logger: g.logger(), Expire: expire, Sleep: sleep, Warm: warm, ConsoleLimits: limits, Serving: &serving, Leader: leader,
				// Sessions an oplab left behind when it stopped are failed
				// and their clusters deleted before anyone is served.
				Repaired: func(rep session.RecoverReport) {
					if n := len(rep.Failed) + len(rep.Deleted); n > 0 {
						fmt.Fprintf(cmd.ErrOrStderr(), "recovered after an unclean stop: %d sessions failed, %d clusters deleted\n", len(rep.Failed), len(rep.Deleted))
					}
				}})
			if err != nil {
				ln.Close()
				return err
			}
			defer closeServer()
			base := "http://" + signInHost(bound, hosts)
			if p := s.PublicURL(); p != "" {
				base = p
			}
			if leader != nil {
				// One replica of several: its output is a pod's log, where
				// a one-time sign-in token must not be. Learners come in
				// through their classes.
				fmt.Fprintf(cmd.OutOrStdout(), "oplab is serving on %s as one replica of several (Lease %s/%s)\nLearners join their class at %s; instructors sign in at %s/instructor/login\n", base, leader.Namespace, leader.Name, base, base)
			} else {
				fmt.Fprintf(cmd.OutOrStdout(), "oplab is serving on %s (press Ctrl-C to stop)\nSign in: %s\nInstructors sign in at %s/instructor/login (add one with: oplab instructor add NAME)\n", base, s.SignInURL(base), base)
			}
			return webapp.ListenAndServe(ctx, ln, s)
		},
	}
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:8080", "address to listen on")
	cmd.Flags().BoolVar(&insecure, "insecure-clusters", false, "serve classes and other addresses than loopback even where learners' clusters cannot be contained (no bubblewrap or user namespaces): any learner can then read and change this machine's files")
	cmd.Flags().StringSliceVar(&hosts, "host", nil, "other names the server is reached by (a classroom machine's name or address)")
	cmd.Flags().DurationVar(&expire.Idle, "idle-timeout", 2*time.Hour, "end a live session after this long without activity (0: never); its results stay, its cluster is deleted")
	cmd.Flags().DurationVar(&sleep.Freeze, "sleep-after", session.DefaultSleepAfter, "put a session to sleep when nobody has looked at it for this long (no page of it open, no command of its learner): its cluster is frozen and uses no CPU, and wakes at its learner's next request (0: never)")
	cmd.Flags().DurationVar(&sleep.Stop, "sleep-stop-after", session.DefaultSleepStopAfter, "when nobody has looked at a session for this long, stop its cluster and give its memory back, keeping it on disk; it starts again at its learner's next request, in a few seconds (0: never)")
	cmd.Flags().StringToIntVar(&warm.Sizes, "warm", nil, "keep this many sessions of a lab started ahead, so that a learner's Start takes one at once: --warm failover=3,rbac=1")
	cmd.Flags().DurationVar(&admit.MakeRoomAfter, "make-room-after", app.DefaultMakeRoomAfter, "when a learner's start or wake waits for room on the machine, stop the cluster of the session nobody has looked at for longest, if nobody has for this long; it starts again from disk at its learner's next request (0: never, they wait)")
	cmd.Flags().IntVar(&admit.MaxClusters, "max-clusters", 0, "start no cluster, a learner's or a warm one, while this many are live or starting (0: no cap); below the cap a start waits in a queue until the machine's measured free memory and CPU have room for one more")
	cmd.Flags().IntVar(&buildBursts, "build-bursts", session.DefaultBuildBursts, "learners' builds of their own controller that may run beyond their cluster's CPU share at once, the others at the share, only slower (0 or less: none)")
	cmd.Flags().IntVar(&limits.Commands, "console-commands", app.DefaultConsoleCommands, "console commands one learner may run at once; one more is refused until one ends")
	cmd.Flags().IntVar(&limits.Follows, "console-follows", app.DefaultConsoleFollows, "of those, commands that keep running (get -w, logs -f, rollout status, wait) one learner may have open at once")
	cmd.Flags().StringVar(&publicURL, "public-url", "", "the address learners reach the server by when a proxy stands in front of it, such as https://lab.school.example: its host is answered, the sign-in links name it, and when it is https the cookies are Secure (the only way oplab is served over https)")
	cmd.Flags().StringVar(&cellMemory, "cell-memory", "", "the memory each learner's cluster may use, all of its processes together, its page cache included (768Mi when not given; a kind node's 2Gi): past it the kernel stops a process of that cluster only, and the learner's page says so")
	cmd.Flags().StringVar(&cellCPU, "cell-cpu", "", fmt.Sprintf("the share of the cores each learner's cluster may use once it is made, such as 500m or 1, or none (%dm when not given; a kind node's 1): every cluster also has the same weight beside every other", app.DefaultCellCPU))
	cmd.Flags().Int64Var(&cellTasks, "cell-tasks", 0, fmt.Sprintf("the processes and threads each learner's cluster may run at once (%d when not given; a kind node's %d)", app.DefaultCellTasks, app.KindNodeTasks))
	cmd.Flags().StringVar(&etcdQuota, "etcd-quota", "", "the most each learner's etcd may hold (256Mi when not given); past it etcd refuses writes with \"database space exceeded\"")
	cmd.Flags().StringVar(&lease, "leader-lease", "", "run as one replica of several sharing a PostgreSQL store (--store): the replica holding this Lease (namespace/name, on the cluster oplab runs in) does the background work — expiry, pools, recovery — and every replica serves learners")
	cmd.Flags().DurationVar(&expire.Max, "session-limit", 8*time.Hour, "end a live session this long after it started, however busy (0: never)")
	return cmd
}

// signInHost is the host:port of the sign-in link: the bound address, or
// for an address that listens everywhere the first --host given.
func signInHost(bound string, hosts []string) string {
	h, port, err := net.SplitHostPort(bound)
	if err != nil || !net.ParseIP(h).IsUnspecified() {
		return bound
	}
	if len(hosts) > 0 {
		if _, _, err := net.SplitHostPort(hosts[0]); err == nil {
			return hosts[0]
		}
		return net.JoinHostPort(hosts[0], port)
	}
	return net.JoinHostPort("127.0.0.1", port)
}
