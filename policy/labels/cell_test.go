package labels_test

import (
	"strings"
	"testing"

	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/policy/labels"
)

func TestCellFilterFromFlag(t *testing.T) {
	var f *labels.Filter
	celltest.New(t, []string{"labels=k8s:team,!k8s:team.internal"}, labels.Cell, celltest.Capture(&f))
	id, _ := f.Filter(labels.MustParseList("k8s:team=a", "k8s:team.internal=x", "k8s:tier=db"))
	if got := labels.Labels(id).String(); got != "k8s:team=a" {
		t.Errorf("identity labels = %s, want only k8s:team=a", got)
	}
	_, err := celltest.Populate(t, []string{"labels=k8s:(["}, labels.Cell, celltest.Capture(&f))
	if err == nil || !strings.Contains(err.Error(), "--labels") {
		t.Errorf("bad --labels: %v, want an error naming the flag", err)
	}
}
