package console_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"oplab.dev/oplab/internal/console"
)

// The web server holds one Runner, a Completer per session, and runs each
// line the learner sends, streaming chunks to the page as they come.
func Example() {
	ctx := context.Background()
	r, err := console.New(ctx, console.Options{Kubectl: "bin/kubectl", Logger: slog.Default()})
	if err != nil {
		panic(err)
	}
	defer r.Close()
	kubeconfig := []byte("…the session's kubeconfig…")

	// The session's learner: their commands share the caps.
	target := console.Target{Owner: "ada", Kubeconfig: kubeconfig}
	res, err := r.Run(ctx, console.Request{Target: target, Line: "kubectl get pods -L databases.example.com/role",
		Output: func(c console.Chunk) { fmt.Printf("%s: %s", c.Stream, c.Data) }})
	var exit *console.ExitError
	switch {
	case errors.Is(err, console.ErrRefused):
		fmt.Println("refused:", err) // one line for the learner; nothing ran
	case errors.As(err, &exit):
		fmt.Println("exit status", exit.Code) // kubectl's own message is on stderr
	case err != nil:
		fmt.Println(err) // time limit, output cap, cancelled, or could not start
	default:
		fmt.Println("done in", res.Duration)
	}

	comp, _ := r.Completer(console.Target{Owner: "ada", Kubeconfig: kubeconfig, Remote: nil}).Complete(ctx, "kubectl get po")
	fmt.Println(comp.From, comp.Candidates)
}
