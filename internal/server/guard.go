package server

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/gin-gonic/gin"
)

// contentSecurityPolicy allows scripts, styles and connections from the
// server itself only: no inline script, no eval, no framing.
const contentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// securityHeaders sets the headers every response carries.
func securityHeaders(c *gin.Context) {
	h := c.Writer.Header()
	h.Set("Content-Security-Policy", contentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	// The sign-in URL carries a token: never send it to another site.
	// (no-referrer would make the browser send "Origin: null" on the
	// page's own form posts, which the CSRF check must refuse.)
	h.Set("Referrer-Policy", "same-origin")
	c.Next()
}

// hostCheck refuses a request whose Host is not one of the server's names,
// so a page on another site cannot reach the server by rebinding its DNS
// name to 127.0.0.1.
func (s *Server) hostCheck(c *gin.Context) {
	if !s.hosts[strings.ToLower(c.Request.Host)] {
		c.AbortWithStatusJSON(http.StatusMisdirectedRequest, gin.H{"error": "unknown host " + c.Request.Host})
		return
	}
	c.Next()
}

// sameOrigin reports whether the request's Origin, when it has one, is the
// server as the request's Host names it.
func sameOrigin(r *http.Request) bool {
	o := r.Header.Get("Origin")
	if o == "" {
		return true
	}
	u, err := url.Parse(o)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && strings.EqualFold(u.Host, r.Host)
}

// limitBody caps every request body at n bytes.
func limitBody(n int64) gin.HandlerFunc {
	return func(c *gin.Context) {
		if c.Request.ContentLength > n {
			c.AbortWithStatusJSON(http.StatusRequestEntityTooLarge, gin.H{"error": "request body too large"})
			return
		}
		if c.Request.Body != nil {
			c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, n)
		}
		c.Next()
	}
}

const (
	sessionCookie = "oplab_session"
	langCookie    = "oplab_lang"
	csrfHeader    = "X-CSRF-Token"
	csrfField     = "_csrf"
	ctxIdentity   = "oplab.identity"
)

// authenticate reads the session cookie and asks the application layer
// whether the sign-in it names still holds. Without a valid cookie, or
// with one whose sign-in was withdrawn, a page asks the caller to sign in
// and an API call is refused; nothing else is shown. When the record
// cannot be read, the request fails rather than trust the cookie.
func (s *Server) authenticate(c *gin.Context) {
	id, err := s.identityOf(c.Request)
	switch {
	case err == nil:
		c.Set(ctxIdentity, id)
		ctx, stop := s.whileSignedIn(c.Request.Context(), id.SignIn)
		defer stop()
		c.Request = c.Request.WithContext(ctx)
		c.Next()
		return
	case !errors.Is(err, errNotSignedIn):
		s.log.Error("check sign-in", "err", err)
		if strings.HasPrefix(c.Request.URL.Path, "/api/") {
			c.AbortWithStatusJSON(http.StatusInternalServerError, gin.H{"error": "cannot check the sign-in now"})
			return
		}
		s.fail(c, err)
		c.Abort()
		return
	case errors.Is(err, ErrSignedOut):
		clearSession(c)
	}
	if strings.HasPrefix(c.Request.URL.Path, "/api/") {
		c.AbortWithStatusJSON(http.StatusUnauthorized, gin.H{"error": "sign in first"})
		return
	}
	s.render(c, http.StatusUnauthorized, "signin.html", nil)
	c.Abort()
}

// DefaultSignInRecheck is how often a lasting request checks its sign-in.
const DefaultSignInRecheck = 10 * time.Second

// whileSignedIn returns a context that ends with parent, or when a check
// every SignInRecheck finds sign-in id withdrawn, so that a request that
// lasts (a live stream, a console watch) ends with its sign-in too; stop
// ends the checks. A request shorter than SignInRecheck costs a timer,
// not a goroutine.
func (s *Server) whileSignedIn(parent context.Context, id string) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(parent)
	var mu sync.Mutex
	stopped := false
	var t *time.Timer
	check := func() {
		_, err := s.cfg.SignIns.SignedIn(ctx, id)
		mu.Lock()
		defer mu.Unlock()
		switch {
		case errors.Is(err, ErrSignedOut):
			cancel(err)
		case !stopped:
			t.Reset(s.cfg.SignInRecheck)
		}
	}
	mu.Lock()
	t = time.AfterFunc(s.cfg.SignInRecheck, check)
	mu.Unlock()
	return ctx, func() {
		mu.Lock()
		stopped = true
		t.Stop()
		mu.Unlock()
		cancel(nil)
	}
}

// errNotSignedIn: the request has no valid session cookie, or its
// sign-in no longer holds (then it also wraps ErrSignedOut).
var errNotSignedIn = errors.New("not signed in")

// identityOf returns the caller of r: the identity its session cookie
// carries, if the sign-in the cookie names still holds and is the one the
// cookie says, with Admin as the record says now.
func (s *Server) identityOf(r *http.Request) (identity, error) {
	ck, err := r.Cookie(sessionCookie)
	if err != nil {
		return identity{}, errNotSignedIn
	}
	id, err := s.signer.decode(sessionCookie, ck.Value, time.Now())
	if err != nil {
		return identity{}, errNotSignedIn
	}
	si, err := s.cfg.SignIns.SignedIn(r.Context(), id.SignIn)
	switch {
	case errors.Is(err, ErrSignedOut):
		return identity{}, fmt.Errorf("%w: %w", errNotSignedIn, err)
	case err != nil:
		return identity{}, err
	}
	same := si.Instructor == "" && id.Role == roleLearner && si.Learner == id.Learner
	if si.Instructor != "" {
		same = id.Role == roleInstructor && si.Instructor == id.Instructor && id.Learner == instructorPrefix+si.Instructor
	}
	if !same {
		return identity{}, errNotSignedIn
	}
	id.Admin = si.Admin
	return id, nil
}

// csrf refuses a state-changing request that does not repeat the session's
// CSRF token (in a header from scripts, in a form field from forms) or that
// comes from another origin.
func csrf(c *gin.Context) {
	switch c.Request.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		c.Next()
		return
	}
	id := caller(c)
	got := c.GetHeader(csrfHeader)
	if got == "" && strings.HasPrefix(c.ContentType(), "application/x-www-form-urlencoded") {
		got = c.PostForm(csrfField)
	}
	if !sameOrigin(c.Request) || got == "" || subtle.ConstantTimeCompare([]byte(got), []byte(id.CSRF)) != 1 {
		c.AbortWithStatusJSON(http.StatusForbidden, gin.H{"error": "missing or wrong CSRF token: reload the page"})
		return
	}
	c.Next()
}

// caller is the signed-in identity of the request.
func caller(c *gin.Context) identity {
	v, _ := c.Get(ctxIdentity)
	id, _ := v.(identity)
	return id
}

// Hosts returns the names a server listening on addr answers to: the
// address itself and, for loopback, localhost with the same port. extra
// are further names (a classroom machine's DNS name or address).
func Hosts(addr string, extra ...string) []string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return append([]string{addr}, extra...)
	}
	out := []string{net.JoinHostPort(host, port)}
	// Listening on loopback or everywhere, the machine's own browser may
	// use any loopback name.
	if ip := net.ParseIP(host); ip != nil && (ip.IsLoopback() || ip.IsUnspecified()) || host == "localhost" {
		out = append(out, "localhost:"+port, "127.0.0.1:"+port, "[::1]:"+port)
	}
	for _, e := range extra {
		if _, _, err := net.SplitHostPort(e); err != nil {
			e = net.JoinHostPort(e, port)
		}
		out = append(out, e)
	}
	return out
}
