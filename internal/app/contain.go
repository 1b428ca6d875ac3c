package app

import (
	"errors"
	"fmt"
	"net"
)

// ErrUncontained is returned (wrapped) when oplab would serve strangers
// while their clusters cannot be contained on this machine.
var ErrUncontained = errors.New("learners' clusters cannot be contained on this machine")

// Serving says how a server may serve, given whether its provider contains
// learners' clusters (see cluster.Provider.Contained).
type Serving struct {
	// Contained: every learner's cluster runs inside walls of its own.
	Contained bool
	// Classes: classes may be created and joined. Without containment a
	// learner could read this machine's files, the store and the key that
	// signs every cookie, or take all of its memory, so classes —
	// strangers — need --insecure-clusters.
	Classes bool
	// Insecure: the operator chose to serve uncontained clusters; the web
	// console then also runs where no sandbox can be made.
	Insecure bool
	// Warning, when set, is one line to print at start-up.
	Warning string
}

// CheckServe decides whether a server may listen on addr, and whether it
// may serve classes. Where clusters are contained it may do both. Where
// they are not, it serves only a learner on this machine (a loopback
// address, no classes), unless insecure — `oplab serve --insecure-clusters`
// — says the operator accepts that any learner can reach the machine.
func (a *App) CheckServe(addr string, insecure bool) (Serving, error) {
	ok, why := a.clusters.Contained()
	if ok {
		return Serving{Contained: true, Classes: true}, nil
	}
	reason := "unknown reason"
	if why != nil {
		reason = why.Error()
	}
	if insecure {
		return Serving{Classes: true, Insecure: true, Warning: fmt.Sprintf(
			"WARNING: --insecure-clusters: learners' clusters run unconfined (%s): any learner can read and change this machine's files, the store and the server's key", reason)}, nil
	}
	if !loopback(addr) {
		return Serving{}, fmt.Errorf("%w (%s): fix what that says (bubblewrap: apt-get install bubblewrap; a control group: run as root or with systemd's Delegate=yes) to serve %s, or serve on 127.0.0.1, or pass --insecure-clusters to serve anyway", ErrUncontained, reason, addr)
	}
	return Serving{Warning: fmt.Sprintf(
		"warning: learners' clusters cannot be contained here (%s); serving this machine's own learner only, no classes (fix what that says, or pass --insecure-clusters)", reason)}, nil
}

// DefaultServing is how a web adapter serves when told nothing: classes
// and a console without a sandbox only where clusters are contained.
func (a *App) DefaultServing() Serving {
	ok, _ := a.clusters.Contained()
	return Serving{Contained: ok, Classes: ok}
}

// ErrNoClasses is answered to joining or creating a class where the server
// serves no class (see Serving.Classes).
var ErrNoClasses = fmt.Errorf("%w: this server serves no class (its operator can make cells possible on its machine, or start it with --insecure-clusters)", ErrUncontained)

// loopback reports whether addr (host:port) listens on loopback only.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
