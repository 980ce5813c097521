package nodecell_test

import (
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/datapath/node"
	"github.com/apiary-net/apiary/datapath/node/nodecell"
)

func TestHandlersValidatePeriodically(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		var m node.Manager
		celltest.StartWithFlags(t, localFlags, testCells(noAllocator{}), nodecell.Cell,
			cell.Provide(func() node.NodeHandlerOut { return node.NodeHandlerOut{Handler: rec} }),
			celltest.Capture(&m))
		m.NodeUpdated(remote("node-b", "192.0.2.20"))
		synctest.Wait()
		rec.takeAll() // the add calls, and the first validation at start

		time.Sleep(node.ValidateInterval - time.Second)
		synctest.Wait()
		if calls := rec.takeAll(); len(calls) != 0 {
			t.Errorf("calls before the interval: %v", calls)
		}
		time.Sleep(time.Second)
		synctest.Wait()
		if got := strings.Join(rec.takeAll(), "|"); got != "validate default/node-a|validate default/node-b" {
			t.Errorf("after %s: %s, want every node validated", node.ValidateInterval, got)
		}
		time.Sleep(node.ValidateInterval)
		synctest.Wait()
		if got := len(rec.takeAll()); got != 2 {
			t.Errorf("%d validations in the second interval, want 2", got)
		}
	})
}
