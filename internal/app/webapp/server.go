package webapp

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"net"
	"net/url"
	"path/filepath"
	"time"

	"oplab.dev/oplab/internal/app"
	"oplab.dev/oplab/internal/console"
	"oplab.dev/oplab/internal/server"
	"oplab.dev/oplab/internal/session"
	"oplab.dev/oplab/web"
)

// ServerConfig is what a single-user server needs beside the App.
type ServerConfig struct {
	// BinDir holds kubectl for the web console.
	BinDir string
	// ConsoleLimits caps each learner's console commands at once.
	ConsoleLimits console.Limits
	// DataDir holds the server's own files (its cookie key).
	DataDir string
	// CookieKey, when set, signs session cookies instead of the key in
	// DataDir (see server.Config.Key).
	CookieKey []byte
	// Web holds the templates, static files and messages; web.FS, built
	// into oplab, when nil.
	Web fs.FS
	// Hosts are the host names the server answers to (see server.Hosts).
	Hosts []string
	// PublicURL is where learners reach the server through what stands in
	// front of it, as its operator wrote it (see server.Config.PublicURL);
	// a bad one fails NewServer.
	PublicURL string
	Logger    *slog.Logger
	// Expire ends live sessions past its limits (see session.Expire).
	Expire session.ExpireOptions
	// Sleep puts to sleep the sessions nobody looks at (see
	// session.Sleep); its Watched is the server's own.
	Sleep session.SleepOptions
	// HousekeepingEvery is how often expiry and sleep are looked at;
	// app.DefaultHousekeepingEvery when zero.
	HousekeepingEvery time.Duration
	// Warm keeps warm sessions ready (see app.PoolOptions).
	Warm app.PoolOptions
	// Serving is what app.CheckServe allowed; App.DefaultServing when nil.
	Serving *app.Serving
	// Repaired, when set, hears what the start-up repair did (see
	// App.Serve) before anyone is served.
	Repaired func(session.RecoverReport)
	// Leader, when set, makes this server one replica of several (see
	// app.RuntimeOptions.Leader).
	Leader *app.LeaderOptions
}

// NewServer builds the web server of a single-user oplab on a: its learner
// is app.LocalLearner, so the browser and the CLI act on the same
// sessions; the console, the live streams and /metrics are mounted. close
// stops the server, then the console and the streams.
func NewServer(ctx context.Context, a *app.App, c ServerConfig) (s *server.Server, close func() error, err error) {
	if c.Web == nil {
		c.Web = web.FS
	}
	var public *url.URL
	if c.PublicURL != "" {
		if public, err = server.ParsePublicURL(c.PublicURL); err != nil {
			return nil, nil, err
		}
	}
	w, err := New(ctx, a, Options{BinDir: c.BinDir, ConsoleLimits: c.ConsoleLimits, Logger: c.Logger, Expire: c.Expire, Sleep: c.Sleep, HousekeepingEvery: c.HousekeepingEvery, Warm: c.Warm, Serving: c.Serving, Leader: c.Leader})
	if err != nil {
		return nil, nil, err
	}
	if c.Repaired != nil {
		c.Repaired(w.rt.Repaired)
	}
	s, err = server.New(server.Config{Learning: w, Classroom: w, SignIns: w, Operations: a, Console: w.Console(), Streams: w, Code: w, Web: c.Web,
		DataDir: filepath.Join(c.DataDir, "server"), Key: c.CookieKey, Hosts: c.Hosts, PublicURL: public, Learner: app.LocalLearner, Logger: c.Logger,
		Metrics: w.Metrics()})
	if err != nil {
		return nil, nil, errors.Join(err, w.Close())
	}
	return s, func() error { s.Close(); return w.Close() }, nil
}

// Hosts are the Host headers a server bound to bound answers, with the
// other names it is reached by (see server.Hosts).
func Hosts(bound string, other ...string) []string { return server.Hosts(bound, other...) }

// ListenAndServe serves s on ln until ctx ends, then shuts it down.
func ListenAndServe(ctx context.Context, ln net.Listener, s *server.Server) error {
	return server.ListenAndServe(ctx, ln, s)
}
