package server

import "oplab.dev/oplab/internal/browsertest"

// consoleErrors returns the errors a page reported (see
// browsertest.ConsoleErrors).
func consoleErrors(ev any) []string { return browsertest.ConsoleErrors(ev) }
