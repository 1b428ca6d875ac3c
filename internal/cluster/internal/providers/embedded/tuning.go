package embedded

// tuning holds the settings that trade memory and CPU for nothing a lab can
// observe. Each is measured by `make bench`; see the README's figures.
type tuning struct {
	etcd, apiserver, controllerManager, scheduler, kwok []string
	// env adds variables per component name (GOGC, GOMEMLIMIT).
	env map[string][]string
}

// defaultTuning is what every cluster gets.
func defaultTuning() tuning {
	return tuning{
		env: map[string][]string{},
	}
}
