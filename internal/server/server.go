// Package server is oplab's web server: pages rendered on the server from
// the embedded templates, and a JSON API under /api.
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
	"time"

	"github.com/gin-gonic/gin"

	"oplab.dev/oplab/internal/cluster"
)

// Config is what the server needs.
type Config struct {
	// Clusters is the provider whose clusters the pages show.
	Clusters *cluster.Provider
	// Web holds templates/ and static/ (web.FS in production).
	Web    fs.FS
	Logger *slog.Logger
}

// Server is the HTTP handler of oplab.
type Server struct {
	cfg    Config
	engine *gin.Engine
}

// New builds the server's routes.
func New(cfg Config) (*Server, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	tmpl, err := template.ParseFS(cfg.Web, "templates/*.html")
	if err != nil {
		return nil, fmt.Errorf("parse templates: %w", err)
	}
	static, err := fs.Sub(cfg.Web, "static")
	if err != nil {
		return nil, err
	}
	gin.SetMode(gin.ReleaseMode)
	e := gin.New()
	e.Use(gin.Recovery(), requestLog(cfg.Logger))
	e.SetHTMLTemplate(tmpl)
	s := &Server{cfg: cfg, engine: e}
	e.StaticFS("/static", http.FS(static))
	e.GET("/", s.clustersPage)
	e.GET("/api/clusters", s.listClusters)
	e.GET("/healthz", func(c *gin.Context) { c.String(http.StatusOK, "ok") })
	return s, nil
}

// ServeHTTP makes Server an http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.engine.ServeHTTP(w, r) }

func (s *Server) clustersPage(c *gin.Context) {
	list, err := s.cfg.Clusters.List(c.Request.Context())
	if err != nil {
		s.cfg.Logger.Error("list clusters", "error", err)
		c.String(http.StatusInternalServerError, "cannot list clusters: %v", err)
		return
	}
	c.HTML(http.StatusOK, "clusters.html", gin.H{"Provider": s.cfg.Clusters.Info().Name, "Clusters": list})
}

func (s *Server) listClusters(c *gin.Context) {
	list, err := s.cfg.Clusters.List(c.Request.Context())
	if err != nil {
		s.cfg.Logger.Error("list clusters", "error", err)
		c.JSON(http.StatusInternalServerError, gin.H{"error": err.Error()})
		return
	}
	if list == nil {
		list = []cluster.Status{}
	}
	c.JSON(http.StatusOK, list)
}

func requestLog(l *slog.Logger) gin.HandlerFunc {
	return func(c *gin.Context) {
		start := time.Now()
		c.Next()
		l.Debug("request", "method", c.Request.Method, "path", c.Request.URL.Path,
			"status", c.Writer.Status(), "duration", time.Since(start))
	}
}

// ListenAndServe serves h on addr until ctx ends, then shuts down gracefully.
// ready, when not nil, receives the URL once the listener is bound.
func ListenAndServe(ctx context.Context, addr string, h http.Handler, ready func(url string)) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	if ready != nil {
		ready("http://" + ln.Addr().String())
	}
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
