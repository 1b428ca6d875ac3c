package bwrap

// Mode says whether a caller runs its programs in a sandbox. The embedded
// provider's cells and the web console's sandbox both take one.
type Mode int

const (
	// Auto sandboxes where bubblewrap works here and otherwise runs
	// unsandboxed, saying why once (a single-user machine).
	Auto Mode = iota
	// Required refuses to go on where bubblewrap does not work.
	Required
	// Off never sandboxes: the programs run with the rights of oplab
	// itself.
	Off
)
