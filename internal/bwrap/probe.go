package bwrap

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"
)

// ErrNotFound is returned where bwrap is not in PATH.
var ErrNotFound = errors.New("bwrap not found in PATH: install bubblewrap (Debian: apt-get install bubblewrap; scripts/ensure-bwrap.sh does)")

// Path returns where bwrap is, or ErrNotFound.
func Path() (string, error) {
	p, err := exec.LookPath("bwrap")
	if err != nil {
		return "", ErrNotFound
	}
	return p, nil
}

// ProbeTimeout bounds Probe: a sandbox that starts in no time elsewhere
// may take seconds on a busy machine, not half a minute.
const ProbeTimeout = 30 * time.Second

// Probe learns whether bubblewrap can make a sandbox here the only way
// that tells: it runs a program in one. command builds that program's
// command (through bwrap, as its caller runs its programs) with the
// context it is given; what names it in the error. Whether bwrap is
// installed is checked first, so that its absence is said as such.
func Probe(ctx context.Context, what string, command func(context.Context) *exec.Cmd) error {
	if _, err := Path(); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, ProbeTimeout)
	defer cancel()
	if out, err := command(ctx).CombinedOutput(); err != nil {
		return fmt.Errorf("bubblewrap cannot make a sandbox here (user namespaces may be disabled: sysctl kernel.unprivileged_userns_clone=1 or user.max_user_namespaces): %s: %w: %s",
			what, err, strings.TrimSpace(string(out)))
	}
	return nil
}
