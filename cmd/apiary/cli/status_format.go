package cli

import (
	"fmt"
	"io"
	"time"

	"github.com/apiary-net/apiary/cells/api/models"
)

// printStatus prints one aligned line per subsystem, with the details of
// the ones that are not fine (of all of them when verbose), then the
// overall state.
func printStatus(w io.Writer, st *models.Status, verbose bool) {
	now := time.Now()
	tw := newTable(w)
	for _, e := range st.Entries {
		fmt.Fprintf(tw, "%s:\t%s\t%s\n", e.Name, e.State, e.Message)
		showDetails := verbose || e.State == models.StateWarning || e.State == models.StateFailure
		if !showDetails {
			continue
		}
		for _, d := range e.Details {
			fmt.Fprintf(tw, "\t\t  - %s\n", d)
		}
		if verbose {
			fmt.Fprintf(tw, "\t\t  (last probe %s, took %s)\n", age(now, e.LastProbe), e.ProbeDuration)
		}
	}
	fmt.Fprintf(tw, "Overall:\t%s\n", st.State)
	tw.Flush()
}

// printControllers prints every controller with its last success and
// failure.
func printControllers(w io.Writer, ctrls []models.ControllerStatus) {
	healthy := 0
	for _, c := range ctrls {
		if c.ConsecutiveFailures == 0 {
			healthy++
		}
	}
	fmt.Fprintf(w, "Controllers: %d/%d healthy\n", healthy, len(ctrls))
	if len(ctrls) == 0 {
		return
	}
	now := time.Now()
	tw := newTable(w)
	fmt.Fprintln(tw, "  Name\tModule\tLast success\tLast failure\tFailures\tLast error")
	for _, c := range ctrls {
		lastErr := c.LastError
		if lastErr == "" {
			lastErr = "no error"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%d/%d\t%s\n", c.Name, c.Module,
			age(now, c.LastSuccess), age(now, c.LastFailure), c.ConsecutiveFailures, c.FailureCount, lastErr)
	}
	tw.Flush()
}
