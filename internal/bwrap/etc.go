package bwrap

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// UID and GID are the user and group a sandbox's programs run as: an
// unprivileged id (nobody's) of the sandbox's own user namespace, mapped
// to the user that runs bwrap.
const (
	UID = 65534
	GID = 65534
)

// Etc is what a sandbox's /etc says: names for loopback, the sandbox's
// one user (UID, GID) and where names are looked up. Nothing of the
// host's: its users, groups and hosts are not the sandbox's business.
type Etc struct {
	// User names UID and GID.
	User string
	// Home is the user's home directory in the sandbox; /nonexistent when
	// empty.
	Home string
	// DNS looks up names that /etc/hosts does not hold in the DNS; the
	// caller binds the host's /etc/resolv.conf for it. Without it a name
	// is loopback's or nothing.
	DNS bool
}

// etcNames are the files WriteEtc writes and Sandbox.Etc binds, sorted.
var etcNames = []string{"group", "hosts", "nsswitch.conf", "passwd"}

// files are e's /etc files by name.
func (e Etc) files() map[string]string {
	home, hosts := e.Home, "files"
	if home == "" {
		home = "/nonexistent"
	}
	if e.DNS {
		hosts += " dns"
	}
	uid, gid := strconv.Itoa(UID), strconv.Itoa(GID)
	return map[string]string{
		"hosts":         "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n",
		"nsswitch.conf": "hosts: " + hosts + "\npasswd: files\ngroup: files\n",
		"passwd":        e.User + ":x:" + uid + ":" + gid + ":" + e.User + ":" + home + ":/nonexistent\n",
		"group":         e.User + ":x:" + gid + ":\n",
	}
}

// WriteEtc writes e's files into dir, which exists, readable by everyone:
// a Sandbox whose Etc is dir binds each of them at /etc.
func WriteEtc(dir string, e Etc) error {
	for name, content := range e.files() {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			return fmt.Errorf("write the sandbox's /etc/%s: %w", name, err)
		}
	}
	return nil
}
