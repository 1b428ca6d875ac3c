package server

import (
	"context"
	"fmt"
	"net/http"

	"github.com/gin-gonic/gin"
)

// Code is the learner's own controller, in a lab whose learner writes it:
// their module's files, and its build. Optional: without it the page has
// no code panel to serve.
type Code interface {
	// Module returns the module's files by slash-separated path: as last
	// built, or the lab's scaffold.
	Module(ctx context.Context, id string) (map[string]string, error)
	// Build builds files in the session's sandbox and, when they compile
	// and run is set, runs the program as the controller. A module that
	// does not compile is a result, not an error; a module past its bounds
	// is ErrInvalid.
	Build(ctx context.Context, id string, files map[string]string, run bool, progress func(Update)) (any, error)
	// Format formats the Go files of files as gofmt does. A file that
	// does not parse is a result, as a build's compile errors are; files
	// past the module's bounds, or outside it, are ErrInvalid.
	Format(id string, files map[string]string) (any, error)
}

var errNoCode = fmt.Errorf("this server builds no learner's code: %w", ErrConflict)

func (s *Server) apiModule(c *gin.Context) {
	if s.cfg.Code == nil {
		s.failJSON(c, errNoCode)
		return
	}
	files, err := s.cfg.Code.Module(c.Request.Context(), session(c).ID)
	if err != nil {
		s.failJSON(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"files": files})
}

func (s *Server) apiBuild(c *gin.Context) {
	if s.cfg.Code == nil {
		s.failJSON(c, errNoCode)
		return
	}
	var in struct {
		Files map[string]string `json:"files"`
		Run   bool              `json:"run"`
	}
	if err := readJSON(c, &in); err != nil {
		s.failJSON(c, err)
		return
	}
	// A build the learner started finishes even if they leave the page.
	ctx, done := s.detached(c)
	defer done()
	id := session(c).ID
	v, err := s.cfg.Code.Build(ctx, id, in.Files, in.Run, s.progress(c, id))
	s.reply(c, v, err)
}

// apiFormat formats the files the page sends: it reads and changes
// nothing of the session, whose owner alone may ask.
func (s *Server) apiFormat(c *gin.Context) {
	if s.cfg.Code == nil {
		s.failJSON(c, errNoCode)
		return
	}
	var in struct {
		Files map[string]string `json:"files"`
	}
	if err := readJSON(c, &in); err != nil {
		s.failJSON(c, err)
		return
	}
	v, err := s.cfg.Code.Format(session(c).ID, in.Files)
	s.reply(c, v, err)
}
