package fence

import (
	"os"
	"testing"

	"oplab.dev/oplab/internal/cluster/clustertest"
)

func TestMain(m *testing.M) { os.Exit(clustertest.Main(m)) }
