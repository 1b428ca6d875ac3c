package server

import (
	"context"
	"crypto/subtle"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
)

// signInTokenTTL is how long a sign-in link works if nobody uses it.
const signInTokenTTL = 24 * time.Hour

// SignIns is what the server needs of the application layer's record of
// who is signed in. A session cookie names a sign-in; the record, read on
// every signed-in request, decides whether it still holds and what it
// may do, so a sign-out, a closed class, an ended membership or a
// removed instructor takes effect on the next request, and whether an
// instructor is an admin is never taken from the cookie.
type SignIns interface {
	// SignInLearner records a sign-in of learner, whom the server has
	// just let in (a join, a rejoin, the sign-in link).
	SignInLearner(ctx context.Context, learner string) (*SignIn, error)
	// SignInInstructor checks an instructor's name and password and
	// records their sign-in. A wrong name or password is
	// ErrBadCredentials; too many attempts, or too many being checked at
	// once, a *Refusal with RefusalTooMany and when to retry.
	SignInInstructor(ctx context.Context, cr Credentials) (*SignIn, error)
	// SignedIn returns the sign-in id names as it stands now;
	// ErrSignedOut when it was withdrawn or has expired.
	SignedIn(ctx context.Context, id string) (*SignIn, error)
	// SignOut withdraws sign-in id.
	SignOut(ctx context.Context, id string) error
}

// SignIn is a learner or an instructor signed in.
type SignIn struct {
	// ID is the secret the session cookie carries (set only when the
	// sign-in is made).
	ID         string
	Learner    string
	Instructor string
	Admin      bool
	Expires    time.Time
}

// Credentials are an instructor's sign-in as the form sent them.
type Credentials struct {
	// Client is the caller's address (attempts are limited per address
	// and per name).
	Client   string
	Name     string
	Password string
	// Device is the instructor this browser signed in as before, from
	// its device cookie; empty when it has none. The application layer
	// decides what that is worth.
	Device string
}

// ErrSignedOut: the sign-in was withdrawn or has expired (401).
var ErrSignedOut = errors.New("signed out")

// deviceCookie remembers, in a browser where an instructor signed in,
// who that was, so their next sign-in there is told apart from guesses
// (see Credentials.Device). It is sent only to the sign-in form.
const (
	deviceCookie = "oplab_device"
	devicePath   = "/instructor/login"
	deviceTTL    = 365 * 24 * time.Hour
)

// device is what the device cookie carries.
type device struct {
	Instructor string `json:"i"`
	Expires    int64  `json:"e"`
}

// deviceOf returns the instructor r's device cookie names; empty when it
// has no valid one.
func (s *Server) deviceOf(r *http.Request) string {
	ck, err := r.Cookie(deviceCookie)
	if err != nil {
		return ""
	}
	var d device
	if s.signer.decodeValue(deviceCookie, ck.Value, &d) != nil || time.Now().Unix() > d.Expires {
		return ""
	}
	return d.Instructor
}

// setDevice gives the browser a device cookie naming instructor.
func (s *Server) setDevice(c *gin.Context, instructor string) error {
	v, err := s.signer.encodeValue(deviceCookie, device{Instructor: instructor, Expires: time.Now().Add(deviceTTL).Unix()})
	if err != nil {
		return err
	}
	http.SetCookie(c.Writer, &http.Cookie{Name: deviceCookie, Value: v, Path: devicePath, HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: s.secure(c.Request), MaxAge: int(deviceTTL.Seconds())})
	return nil
}

// SignInURL mints a one-time sign-in token and returns the link that uses
// it on base (http://127.0.0.1:8080), as Jupyter prints one at start-up.
func (s *Server) SignInURL(base string) string {
	tok := randomToken(24)
	s.mu.Lock()
	s.tokens[tok] = time.Now().Add(signInTokenTTL)
	s.mu.Unlock()
	return strings.TrimSuffix(base, "/") + "/login?token=" + url.QueryEscape(tok)
}

// useToken consumes a sign-in token; it reports whether it was valid.
func (s *Server) useToken(tok string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	ok := false
	for t, exp := range s.tokens {
		if now.After(exp) {
			delete(s.tokens, t)
			continue
		}
		// Every token is compared, in constant time, so timing tells
		// nothing of which ones exist.
		if subtle.ConstantTimeCompare([]byte(t), []byte(tok)) == 1 {
			delete(s.tokens, t)
			ok = true
		}
	}
	return ok
}

// login exchanges a sign-in token for a session cookie.
func (s *Server) login(c *gin.Context) {
	tok := c.Query("token")
	if tok == "" || !s.useToken(tok) {
		s.render(c, http.StatusUnauthorized, "signin.html", map[string]any{"Used": tok != ""})
		return
	}
	if err := s.signInAs(c, s.cfg.Learner); err != nil {
		s.fail(c, err)
		return
	}
	s.log.Info("signed in", "learner", s.cfg.Learner)
	c.Redirect(http.StatusSeeOther, "/")
}

// logout withdraws the caller's sign-in, so the cookie is refused from
// the next request on wherever a copy of it is, and clears it.
func (s *Server) logout(c *gin.Context) {
	if err := s.cfg.SignIns.SignOut(c.Request.Context(), caller(c).SignIn); err != nil {
		s.fail(c, err)
		return
	}
	clearSession(c)
	c.Redirect(http.StatusSeeOther, "/")
}

// clearSession tells the browser to forget its session cookie.
func clearSession(c *gin.Context) {
	http.SetCookie(c.Writer, &http.Cookie{Name: sessionCookie, Value: "", Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, MaxAge: -1})
}

// setLang remembers the learner's language and goes back to the page.
func (s *Server) setLang(c *gin.Context) {
	l := c.PostForm("lang")
	if !slices.Contains(langs, l) {
		c.JSON(http.StatusBadRequest, gin.H{"error": "unknown language " + l})
		return
	}
	http.SetCookie(c.Writer, &http.Cookie{Name: langCookie, Value: l, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: s.secure(c.Request), MaxAge: 365 * 24 * 3600})
	c.Redirect(http.StatusSeeOther, localPath(c.PostForm("next")))
}

// localPath returns p when it is a path on this server, else "/": a
// redirect never leaves the site.
func localPath(p string) string {
	if !strings.HasPrefix(p, "/") || strings.HasPrefix(p, "//") || strings.HasPrefix(p, "/\\") {
		return "/"
	}
	u, err := url.Parse(p)
	if err != nil || u.Host != "" || u.Scheme != "" {
		return "/"
	}
	return p
}
