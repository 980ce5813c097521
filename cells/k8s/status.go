package k8s

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/version"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/status"
)

type statusParams struct {
	cell.In

	Module    cell.FullModuleID
	Config    Config
	Clientset Clientset
	Gate      CacheSync
	APIs      *apiRegistry
}

type statusOut struct {
	cell.Out

	Server status.Provider `group:"status-providers"`
	APIs   status.Provider `group:"status-providers"`
}

// newStatusProviders adds the "Kubernetes" line (the server's version, as
// Cilium prints it: "1.35 (v1.35.4) [linux/amd64]", and the cache-sync
// gate in the details) and the "Kubernetes APIs" line (the APIs the
// agent lists and watches, and why any of them fails).
func newStatusProviders(p statusParams) statusOut {
	return statusOut{
		Server: status.Provider{Name: "Kubernetes", Module: p.Module, Probe: func(ctx context.Context) status.Report {
			return serverReport(ctx, p)
		}},
		APIs: status.Provider{Name: "Kubernetes APIs", Module: p.Module, Probe: func(context.Context) status.Report {
			return apisReport(p)
		}},
	}
}

func serverReport(ctx context.Context, p statusParams) status.Report {
	if !p.Clientset.IsEnabled() {
		return status.Report{State: status.Disabled, Message: ErrDisabled.Error()}
	}
	ctx, cancel := context.WithTimeout(ctx, p.Config.K8sHeartbeatTimeout)
	defer cancel()
	details := []string{"configured from " + p.Clientset.Source(), gateDetail(p.Gate)}
	v, err := serverVersion(ctx, p.Clientset)
	if err != nil {
		return status.Report{State: status.Failure,
			Message: fmt.Sprintf("%s unreachable: %v", p.Clientset.RestConfig().Host, err), Details: details}
	}
	return status.Report{State: status.Ok, Message: FormatVersion(v), Details: details}
}

// serverVersion asks the server for its version.
func serverVersion(ctx context.Context, cs Clientset) (*version.Info, error) {
	raw, err := cs.CoreV1().Get().AbsPath("/version").Do(ctx).Raw()
	if err != nil {
		return nil, err
	}
	var v version.Info
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("decode /version: %w", err)
	}
	return &v, nil
}

// FormatVersion formats a server version as Cilium's status does:
// "1.35 (v1.35.4) [linux/amd64]".
func FormatVersion(v *version.Info) string {
	return fmt.Sprintf("%s.%s (%s) [%s]", digits(v.Major), digits(v.Minor), v.GitVersion, v.Platform)
}

// digits drops what follows the leading digits ("35+" -> "35").
func digits(s string) string {
	i := strings.IndexFunc(s, func(r rune) bool { return r < '0' || r > '9' })
	if i < 0 {
		return s
	}
	return s[:i]
}

// gateDetail says where the cache-sync gate stands.
func gateDetail(g CacheSync) string {
	pending, open := g.Pending()
	switch {
	case open && len(pending) == 0:
		return "caches synced"
	case open:
		return fmt.Sprintf("--k8s-sync-timeout passed; not synced: %s", strings.Join(pending, ", "))
	}
	return fmt.Sprintf("waiting for caches: %s", strings.Join(pending, ", "))
}

func apisReport(p statusParams) status.Report {
	if !p.Clientset.IsEnabled() {
		return status.Report{State: status.Disabled, Message: ErrDisabled.Error()}
	}
	names, errs := p.APIs.snapshot()
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = strconv.Quote(n)
	}
	r := status.Report{State: status.Ok, Message: "[" + strings.Join(quoted, ", ") + "]"}
	for _, err := range errs {
		r.State = status.Warning
		r.Details = append(r.Details, err.Error())
	}
	return r
}
