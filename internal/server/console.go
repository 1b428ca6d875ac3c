package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/gin-gonic/gin"

	"oplab.dev/oplab/internal/frame"
	"oplab.dev/oplab/internal/metrics"
)

// errNoConsole answers console calls on a server built without one.
var errNoConsole = fmt.Errorf("the console is not available on this server: %w", ErrConflict)

// consoleTimeout bounds a console command that is not stopped (a -w).
const consoleTimeout = 30 * time.Minute

// flushWriter sends the command's output to the browser as it comes.
type flushWriter struct {
	mu sync.Mutex
	c  *gin.Context
}

func (w *flushWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n, err := w.c.Writer.Write(p)
	w.c.Writer.Flush()
	return n, err
}

// apiConsole runs one command line; its output streams back as plain text
// until the command ends or the browser stops it (aborting the request).
// A refused or failed command's message ends the output after a marker
// line, since the status was sent with the first byte.
func (s *Server) apiConsole(c *gin.Context) {
	if s.cfg.Console == nil {
		s.failJSON(c, errNoConsole)
		return
	}
	var in struct {
		Line  string `json:"line"`
		Stdin string `json:"stdin"`
	}
	if err := readJSON(c, &in); err != nil {
		s.failJSON(c, err)
		return
	}
	ctx, cancel := context.WithTimeout(c.Request.Context(), consoleTimeout)
	defer cancel()
	c.Header("Content-Type", "text/plain; charset=utf-8")
	c.Header("Cache-Control", "no-store")
	c.Header("X-Accel-Buffering", "no")
	c.Status(http.StatusOK)
	c.Writer.Flush()
	w := &flushWriter{c: c}
	if err := s.cfg.Console.Run(ctx, session(c).ID, in.Line, in.Stdin, w); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintf(w, "\n\x00error: %v\n", err)
	}
}

func (s *Server) apiComplete(c *gin.Context) {
	if s.cfg.Console == nil {
		s.failJSON(c, errNoConsole)
		return
	}
	v, err := s.cfg.Console.Complete(c.Request.Context(), session(c).ID, c.Query("line"))
	if v.Candidates == nil {
		v.Candidates = []string{}
	}
	s.reply(c, v, err)
}

// apiApply dry-runs the editor's YAML on the server (the API server's own
// validation and admission), or applies it, through the console's kubectl.
func (s *Server) apiApply(c *gin.Context) {
	if s.cfg.Console == nil {
		s.failJSON(c, errNoConsole)
		return
	}
	var in struct {
		YAML   string `json:"yaml"`
		DryRun bool   `json:"dryRun"`
	}
	if err := readJSON(c, &in); err != nil {
		s.failJSON(c, err)
		return
	}
	res, err := s.cfg.Console.Apply(c.Request.Context(), session(c).ID, in.YAML, in.DryRun)
	if err != nil {
		s.failJSON(c, err)
		return
	}
	c.JSON(http.StatusOK, res)
}

// streams a session offers.
var streams = []string{"log", "cluster"}

// apiStream sends a session's live stream, resuming after ?epoch=&after=
// (the frame last seen from this server) or ?cursor= (the place last seen,
// from any server).
func (s *Server) apiStream(c *gin.Context) {
	name := c.Param("stream")
	if !slices.Contains(streams, name) {
		c.JSON(http.StatusNotFound, gin.H{"error": "no stream " + name})
		return
	}
	after, _ := strconv.ParseUint(c.Query("after"), 10, 64)
	from := Resume{Epoch: c.Query("epoch"), After: after, Cursor: c.Query("cursor")}
	if len(from.Cursor) > maxCursor || len(from.Epoch) > maxCursor {
		c.JSON(http.StatusBadRequest, gin.H{"error": fmt.Sprintf("stream %s: epoch and cursor are at most %d characters", name, maxCursor)})
		return
	}
	if s.cfg.Streams == nil {
		s.failJSON(c, fmt.Errorf("live streams are not available on this server: %w", ErrConflict))
		return
	}
	ctx, done := s.streamCtx(c)
	defer done()
	frames, err := s.cfg.Streams.Subscribe(ctx, session(c).ID, name, from)
	if err != nil {
		s.failJSON(c, err)
		return
	}
	kind := metrics.StreamLog
	if name == "cluster" {
		kind = metrics.StreamView
	}
	defer s.cfg.Metrics.WebSocketOpened(kind)()
	// The frames' own bytes: a data frame's JSON was made once for every
	// client.
	s.wsEnded(c.Request, serveWS(ctx, c.Writer, c.Request, s.ws, frames, frame.Frame.MarshalJSON))
}
