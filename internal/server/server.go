package server

import (
	"context"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/gin-gonic/gin"

	"oplab.dev/oplab/internal/metrics"
)

// Config is what the server needs.
type Config struct {
	// Learning, Classroom and SignIns are the application layer, by who
	// calls it (one value may be all three, as internal/app/webapp.Web is).
	Learning  Learning
	Classroom Classroom
	SignIns   SignIns
	// Console and Streams are optional: without them the page says the
	// console or the live panels are not available.
	Console Console
	Streams Streams
	// Code, optional, builds a learner's own controller (see Code).
	Code Code
	// Metrics, when set, is served at /metrics and counts open WebSockets.
	Metrics *metrics.Metrics
	// Operations, when set, answers /readyz.
	Operations Operations
	// Web holds templates/, static/ and i18n/ (web.FS in production).
	Web fs.FS
	// DataDir keeps the key that signs session cookies, unless Key is
	// given.
	DataDir string
	// Key, when set, signs session cookies instead of DataDir's key file:
	// replicas of one oplab share it (the chart gives it from a Secret),
	// so any of them accepts a cookie another signed. At least 32 bytes.
	Key []byte
	// Hosts are the Host headers the server answers (see Hosts).
	Hosts []string
	// PublicURL is where learners reach the server when something stands
	// in front of it (an https proxy, an Ingress): its host is answered
	// besides Hosts, and when it is https every cookie is Secure, though
	// the request reached the server in plain HTTP. See ParsePublicURL.
	PublicURL *url.URL
	// Learner is who signs in with a sign-in token: one person's server
	// ("local", the CLI's learner, so both work on the same sessions).
	Learner string
	// MaxBody caps request bodies; 1 MiB when zero.
	MaxBody int64
	// SessionTTL is how long a sign-in lasts; 30 days when zero.
	SessionTTL time.Duration
	// SignInRecheck is how often a request that lasts (a live stream, a
	// console watch) checks again that its sign-in holds, ending when it
	// was withdrawn; DefaultSignInRecheck when zero.
	SignInRecheck time.Duration
	Logger        *slog.Logger
}

// Server is the HTTP handler of oplab.
type Server struct {
	cfg    Config
	engine *gin.Engine
	tmpl   *template.Template
	cat    catalogue
	signer signer
	hosts  map[string]bool
	log    *slog.Logger
	events *broker
	ws     wsTimes // each WebSocket's write and pong waits

	mu     sync.Mutex
	tokens map[string]time.Time // sign-in tokens not used yet, with their expiry

	// ctx bounds work that outlives its request (a start the learner
	// navigated away from); Close cancels it and waits.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// ParsePublicURL reads the address learners reach the server by, as its
// operator writes it: http or https, a host (and port), nothing after it.
func ParsePublicURL(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return nil, fmt.Errorf("public URL %q: %w", s, err)
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, fmt.Errorf("public URL %q: want http:// or https://", s)
	case u.Host == "" || u.User != nil:
		return nil, fmt.Errorf("public URL %q: want a host, and no user", s)
	case u.Path != "" && u.Path != "/" || u.RawQuery != "" || u.Fragment != "":
		return nil, fmt.Errorf("public URL %q: oplab is served at the root of its host: give no path, query or fragment", s)
	}
	u.Path = ""
	return u, nil
}

// PublicURL is where learners reach the server (Config.PublicURL), or ""
// when it was not said.
func (s *Server) PublicURL() string {
	if s.cfg.PublicURL == nil {
		return ""
	}
	return s.cfg.PublicURL.String()
}

// secure reports whether a cookie set in answer to r must be Secure: r
// came over TLS, or the server's public URL is https (a proxy in front
// ended TLS).
func (s *Server) secure(r *http.Request) bool {
	return r.TLS != nil || s.cfg.PublicURL != nil && s.cfg.PublicURL.Scheme == "https"
}

// New builds the server's routes.
func New(cfg Config) (*Server, error) {
	if cfg.Learning == nil || cfg.Classroom == nil || cfg.SignIns == nil || cfg.Web == nil || cfg.DataDir == "" || len(cfg.Hosts) == 0 || cfg.Learner == "" {
		return nil, errors.New("new server: learning, classroom, sign-ins, web, data dir, hosts and learner are required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.MaxBody == 0 {
		cfg.MaxBody = 1 << 20
	}
	if cfg.SessionTTL == 0 {
		cfg.SessionTTL = 30 * 24 * time.Hour
	}
	if cfg.SignInRecheck == 0 {
		cfg.SignInRecheck = DefaultSignInRecheck
	}
	key := cfg.Key
	if len(key) == 0 {
		var err error
		if key, err = loadKey(cfg.DataDir); err != nil {
			return nil, err
		}
	} else if len(key) < 32 {
		return nil, fmt.Errorf("the cookie key given is too short (%d bytes, want 32)", len(key))
	}
	cat, err := loadCatalogue(cfg.Web)
	if err != nil {
		return nil, err
	}
	tmpl, err := template.New("").Funcs(funcs(cat)).ParseFS(cfg.Web, "templates/*.html")
	if err != nil {
		return nil, fmt.Errorf("parse templates: %w", err)
	}
	s := &Server{cfg: cfg, tmpl: tmpl, cat: cat, signer: signer{key: key}, hosts: map[string]bool{},
		log: cfg.Logger, tokens: map[string]time.Time{}, events: newBroker(), ws: wsTimes{write: wsWriteWait, pong: wsPongWait}}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	for _, h := range cfg.Hosts {
		s.hosts[strings.ToLower(h)] = true
	}
	if u := cfg.PublicURL; u != nil {
		s.hosts[strings.ToLower(u.Host)] = true
	}
	if err := s.routes(); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *Server) routes() error {
	static, err := fs.Sub(s.cfg.Web, "static")
	if err != nil {
		return err
	}
	gin.SetMode(gin.ReleaseMode)
	e := gin.New()
	e.Use(gin.Recovery(), requestLog(s.log), securityHeaders, s.hostCheck, limitBody(s.cfg.MaxBody))
	e.GET("/healthz", func(c *gin.Context) { c.String(http.StatusOK, "ok") })
	e.GET("/readyz", s.readyz)
	if s.cfg.Metrics != nil {
		// Counts only, no learner's data: scrapers carry no cookie.
		e.GET("/metrics", gin.WrapH(s.cfg.Metrics.Handler()))
	}
	e.StaticFS("/static", http.FS(static))
	e.GET("/login", s.login)
	// Joining a class needs no sign-in: it is how a learner gets one.
	e.GET("/join", s.joinPage)
	e.POST("/join", s.join)
	e.POST("/rejoin", s.rejoin)
	// An instructor signs in with a name and password.
	e.GET("/instructor/login", s.instructorLoginPage)
	e.POST("/instructor/login", s.instructorLogin)

	a := e.Group("/", s.authenticate, csrf)
	a.GET("/", s.cataloguePage)
	a.GET("/labs/:lab", s.labPage)
	a.GET("/sessions/:id/summary", s.summaryPage)
	a.GET("/sessions/:id/quiz", s.quizPage)
	a.POST("/lang", s.setLang)
	a.POST("/logout", s.logout)
	s.apiRoutes(a.Group("/api"))
	s.instructorRoutes(a)
	s.engine = e
	return nil
}

// ServeHTTP makes Server an http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.engine.ServeHTTP(w, r) }

// Close stops the work the server started beyond its requests and waits
// for it.
func (s *Server) Close() {
	s.cancel()
	s.wg.Wait()
}

func requestLog(l *slog.Logger) gin.HandlerFunc {
	return func(c *gin.Context) {
		start := time.Now()
		c.Next()
		// The path only: a query may hold a sign-in token.
		l.Debug("request", "method", c.Request.Method, "path", c.Request.URL.Path,
			"status", c.Writer.Status(), "duration", time.Since(start))
	}
}

// ListenAndServe serves h on ln until ctx ends, then shuts down gracefully.
func ListenAndServe(ctx context.Context, ln net.Listener, h http.Handler) error {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if err := srv.Shutdown(sctx); err != nil {
			return err
		}
		if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	}
}

// readyTimeout bounds a readiness check: a probe that hangs is an answer.
const readyTimeout = 5 * time.Second

// readyz answers 200 when the server can serve, else 503 with the reason
// (no learner's data in it: probes carry no cookie).
func (s *Server) readyz(c *gin.Context) {
	if s.cfg.Operations != nil {
		ctx, cancel := context.WithTimeout(c.Request.Context(), readyTimeout)
		defer cancel()
		if err := s.cfg.Operations.Ready(ctx); err != nil {
			s.log.Warn("not ready", "err", err)
			c.String(http.StatusServiceUnavailable, "not ready: %v\n", err)
			return
		}
	}
	c.String(http.StatusOK, "ok")
}
