package server

import (
	"errors"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"
)

// instructorLoginView is what the instructor's sign-in page shows.
type instructorLoginView struct {
	Name  string
	Error string
	// Token is the form's CSRF token (as the join form's).
	Token string
}

// instructorLoginPage shows the instructor's sign-in form.
func (s *Server) instructorLoginPage(c *gin.Context) {
	s.render(c, http.StatusOK, "instructor_login.html", instructorLoginView{Token: s.joinToken(c)})
}

// instructorLogin signs an instructor in with their name and password.
func (s *Server) instructorLogin(c *gin.Context) {
	v := instructorLoginView{Name: c.PostForm("name")}
	lang := pageLang(c.Request)
	if !s.joinFormOK(c) {
		v.Error, v.Token = s.cat.text(lang, "join.expired"), s.joinToken(c)
		s.render(c, http.StatusForbidden, "instructor_login.html", v)
		return
	}
	in, err := s.cfg.SignIns.SignInInstructor(c.Request.Context(), Credentials{Client: c.RemoteIP(), Name: v.Name,
		Password: c.PostForm("password"), Device: s.deviceOf(c.Request)})
	if err != nil {
		code := status(err)
		switch code {
		case http.StatusUnauthorized:
			v.Error = s.cat.text(lang, "instructor.login.wrong")
		case http.StatusInternalServerError:
			s.log.Error("instructor sign-in failed", "err", err)
			v.Error = s.cat.text(lang, "error.title")
		case http.StatusTooManyRequests:
			retryAfter(c, err)
			var r *Refusal
			errors.As(err, &r)
			v.Error = strings.ReplaceAll(s.cat.text(lang, "instructor.login.toomany"), "{wait}", duration(r.Retry))
		default:
			v.Error = s.message(lang, err)
		}
		v.Token = s.joinToken(c)
		s.render(c, code, "instructor_login.html", v)
		return
	}
	id := identity{Learner: instructorPrefix + in.Instructor, Role: roleInstructor, Instructor: in.Instructor}
	if err := s.setDevice(c, in.Instructor); err != nil {
		s.fail(c, err)
		return
	}
	if err := s.signIn(c, id, in); err != nil {
		s.fail(c, err)
		return
	}
	s.log.Info("instructor signed in", "instructor", in.Instructor)
	c.Redirect(http.StatusSeeOther, "/instructor")
}

// requireInstructor lets only a signed-in instructor through: a learner
// is refused (403 for a page, 404 for the API, which names nothing).
func (s *Server) requireInstructor(c *gin.Context) {
	if caller(c).Role == roleInstructor {
		c.Next()
		return
	}
	if strings.HasPrefix(c.Request.URL.Path, "/api/") {
		c.AbortWithStatusJSON(http.StatusNotFound, gin.H{"error": "not found"})
		return
	}
	s.render(c, http.StatusForbidden, "error.html", map[string]any{"Code": http.StatusForbidden,
		"Message": s.cat.text(pageLang(c.Request), "instructor.only")})
	c.Abort()
}

// instructor is the signed-in instructor of the request; Admin is what
// the sign-in's record said on this request.
func instructor(c *gin.Context) Instructor {
	id := caller(c)
	return Instructor{Name: id.Instructor, Admin: id.Admin}
}
