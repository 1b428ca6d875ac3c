package server

import (
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"oplab.dev/oplab/internal/board"
)

// instructorView is what the instructor's page shows: their classes, and
// the course's labs a class's form chooses from.
type instructorView struct {
	Instructor Instructor
	Classes    []board.Class
	Labs       []LabEntry
}

func (s *Server) instructorPage(c *gin.Context) {
	ctx := c.Request.Context()
	in := instructor(c)
	classes, err := s.cfg.Classroom.Classes(ctx, in)
	if err != nil {
		s.fail(c, err)
		return
	}
	labs, err := s.cfg.Learning.Catalogue(ctx, caller(c).Learner, pageLang(c.Request))
	if err != nil {
		s.fail(c, err)
		return
	}
	s.render(c, http.StatusOK, "instructor.html", instructorView{Instructor: in, Classes: classes, Labs: labs})
}

// apiCreateClass makes a class from the create form.
func (s *Server) apiCreateClass(c *gin.Context) {
	var f ClassForm
	if err := readJSON(c, &f); err != nil {
		s.failJSON(c, err)
		return
	}
	v, err := s.cfg.Classroom.CreateClass(c.Request.Context(), instructor(c), f)
	s.replyForm(c, v, err)
}

// apiEditClass changes a class to its edit form's fields.
func (s *Server) apiEditClass(c *gin.Context) {
	var f ClassForm
	if err := readJSON(c, &f); err != nil {
		s.failJSON(c, err)
		return
	}
	v, err := s.cfg.Classroom.EditClass(c.Request.Context(), instructor(c), c.Param("name"), f)
	s.replyForm(c, v, err)
}

// replyForm answers a class form; an edit made from an old version says
// so in the page's language, for the form to show.
func (s *Server) replyForm(c *gin.Context, v *board.Class, err error) {
	if errors.Is(err, ErrChanged) {
		c.AbortWithStatusJSON(http.StatusConflict, gin.H{"error": s.cat.text(pageLang(c.Request), "classform.changed"), "reason": "changed"})
		return
	}
	s.reply(c, v, err)
}

// classFieldsView is what the fields of a class's form show: one block of
// the template for the create form and every edit form.
type classFieldsView struct {
	Lang string
	// ID prefixes the fields' ids: "new", or "edit-<class>".
	ID   string
	Edit bool
	Name string
	// Labs are the course's labs, the class's chosen ones first in its
	// order.
	Labs      []labChoice
	Capacity  string
	Opens     string // RFC 3339, for the page's script to show in local time
	Closes    string
	TimeLimit string
	// Warm is the class's warm sessions per lab.
	Warm map[string]int
}

// LabIDs are the ids of Labs, in their order.
func (v classFieldsView) LabIDs() []string {
	ids := make([]string, len(v.Labs))
	for i, l := range v.Labs {
		ids[i] = l.ID
	}
	return ids
}

type labChoice struct {
	ID, Title string
	Checked   bool
}

// newClassFields are the create form's fields.
func newClassFields(lang string, labs []LabEntry) classFieldsView {
	v := classFieldsView{Lang: lang, ID: "new"}
	for _, l := range labs {
		v.Labs = append(v.Labs, labChoice{ID: l.ID, Title: l.Title})
	}
	return v
}

// editClassFields are the fields of c's edit form.
func editClassFields(lang string, labs []LabEntry, c board.Class) classFieldsView {
	v := classFieldsView{Lang: lang, ID: "edit-" + c.Name, Edit: true, Name: c.Name, Capacity: strconv.Itoa(c.Capacity),
		Opens: rfc3339(c.Opens), Closes: rfc3339(c.Closes), TimeLimit: shortDuration(c.TimeLimit.Duration()), Warm: c.Warm}
	titles := map[string]string{}
	for _, l := range labs {
		titles[l.ID] = l.Title
	}
	for _, id := range c.Labs {
		v.Labs = append(v.Labs, labChoice{ID: id, Title: titles[id], Checked: true})
	}
	for _, l := range labs {
		if !slices.Contains(c.Labs, l.ID) {
			v.Labs = append(v.Labs, labChoice{ID: l.ID, Title: l.Title})
		}
	}
	return v
}

func rfc3339(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// shortDuration is d as a time limit is typed: 1h30m, 45m; empty for none.
func shortDuration(d time.Duration) string {
	if d <= 0 {
		return ""
	}
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
