package app

import (
	"context"
	"errors"
	"fmt"

	"oplab.dev/oplab/internal/cluster"
	"oplab.dev/oplab/internal/controllab"
	"oplab.dev/oplab/internal/operator/install"
	"oplab.dev/oplab/internal/operator/thirdparty"
	"oplab.dev/oplab/internal/oplog"
	"oplab.dev/oplab/internal/session"
)

// ErrNoLog: a session has no operator log to read (its cluster is gone
// and no copy was kept, or it has not been made yet).
var ErrNoLog = errors.New("no operator log")

// OperatorLog returns session id's operator log, wherever it is: the host
// process's files on the embedded provider, the operator pod's log through
// the API server on kind, or the copy kept when the cluster was deleted.
// The page's stream, `oplab logs`, the debrief and the copy kept at
// deletion all open a log here. Callers check who may read it.
func (a *App) OperatorLog(ctx context.Context, id string) (oplog.Source, error) {
	st, err := a.sessions.Status(ctx, id)
	if err != nil {
		return nil, err
	}
	src, _, err := a.operatorLog(ctx, st)
	return src, err
}

// operatorLog returns st's operator log and where it comes from (LogLive
// or LogRecorded).
func (a *App) operatorLog(ctx context.Context, st *session.Status) (oplog.Source, string, error) {
	if st.ClusterLive && st.Cluster != "" {
		src, err := a.liveLog(ctx, st.ID, st.Lab)
		if err == nil {
			return src, LogLive, nil
		}
		a.log.Debug("live operator log", "session", st.ID, "err", err)
	}
	if p := a.recordedLog(st.ID); exists(p) {
		return oplog.Files{p}, LogRecorded, nil
	}
	return nil, "", fmt.Errorf("session %s (%s): %w", st.ID, st.State, ErrNoLog)
}

// liveLog returns the operator log of session id's cluster: the lab's
// operator's, the reference one's or a third-party one's, read where the
// cluster's provider runs it (install.OperatorLog decides where).
func (a *App) liveLog(ctx context.Context, id, labID string) (oplog.Source, error) {
	p, name, err := a.sessions.Provider(ctx, id) // wakes the session
	if err != nil {
		return nil, err
	}
	return a.logOf(ctx, p, name, labID)
}

// logOf returns the operator log of cluster name of p, where a session of
// lab labID runs it; it does not wake a sleeping session (the logs of a
// cluster that can sleep, an embedded one's, are its files).
func (a *App) logOf(ctx context.Context, p *cluster.Provider, name, labID string) (oplog.Source, error) {
	cfg, err := p.RESTConfig(name)
	if err != nil {
		return nil, err
	}
	rel := install.Reference
	if l, err := a.course.Lab(labID); err == nil && l.LearnerWritesController() {
		return controllab.LogOf(ctx, p, name, labID, cfg)
	} else if err == nil && l.Operator != "" {
		o, err := thirdparty.Find(l.Operator)
		if err != nil {
			return nil, err
		}
		rel = o.Release
	}
	return install.OperatorLog(p, name, cfg, rel), nil
}
