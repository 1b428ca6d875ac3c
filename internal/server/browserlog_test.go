package server

import (
	"fmt"

	"github.com/chromedp/cdproto/runtime"
)

// consoleErrors returns the errors a page reported: uncaught exceptions
// and console.error calls.
func consoleErrors(ev any) []string {
	switch e := ev.(type) {
	case *runtime.EventExceptionThrown:
		d := e.ExceptionDetails
		msg := d.Text
		if d.Exception != nil {
			msg += " " + d.Exception.Description
		}
		return []string{fmt.Sprintf("%s:%d: %s", d.URL, d.LineNumber+1, msg)}
	case *runtime.EventConsoleAPICalled:
		if e.Type == runtime.ConsoleAPICalledTypeError {
			var out []string
			for _, a := range e.Args {
				out = append(out, fmt.Sprintf("console.error: %s %s", a.Value, a.Description))
			}
			return out
		}
	}
	return nil
}
