package monitorcell

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/apiary-net/apiary/cells/api"
	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/datapath/maps/eventsmap"
	"github.com/apiary-net/apiary/datapath/monitor"
	"github.com/apiary-net/apiary/policy"
	"github.com/apiary-net/apiary/policy/labels"
)

// parseTypes reads ?type= (repeated, or comma-separated): drop,
// policy-verdict, trace; drop and policy-verdict when absent.
func parseTypes(r *http.Request) (monitor.Types, error) {
	var t monitor.Types
	for _, v := range r.URL.Query()["type"] {
		for _, s := range strings.Split(v, ",") {
			switch strings.TrimSpace(s) {
			case models.MonitorTypeDrop:
				t.Drop = true
			case models.MonitorTypePolicyVerdict:
				t.PolicyVerdict = true
			case models.MonitorTypeTrace:
				t.Trace = true
			default:
				return t, fmt.Errorf("query parameter type: %q is not %s, %s or %s",
					s, models.MonitorTypeDrop, models.MonitorTypePolicyVerdict, models.MonitorTypeTrace)
			}
		}
	}
	return t, nil
}

// newMonitorHandler serves GET /v1/monitor: the events of the selected
// types as JSON lines (models.MonitorMessage), each flushed as it
// comes, until the client goes or the agent stops. A client that reads
// too slowly loses events and gets a "lost" line saying how many.
func newMonitorHandler(svc *service) api.HandlerOut {
	out := api.NewHandlerOut(http.MethodGet, "/v1/monitor", func(w http.ResponseWriter, r *http.Request) {
		types, err := parseTypes(r)
		if err != nil {
			api.WriteError(w, http.StatusBadRequest, err)
			return
		}
		if svc.err != nil {
			api.WriteError(w, http.StatusServiceUnavailable, svc.err)
			return
		}
		sub, err := svc.m.Subscribe(types, monitor.DefaultBuffer)
		if err != nil {
			api.WriteError(w, http.StatusServiceUnavailable, err)
			return
		}
		defer sub.Close()
		stream(w, r, sub)
	})
	out.Handler.Streaming = true
	return out
}

// stream writes sub's events to w until the client or the subscription
// ends.
func stream(w http.ResponseWriter, r *http.Request, sub *monitor.Subscription) {
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	enc := json.NewEncoder(w)
	send := func(msg models.MonitorMessage) bool {
		return enc.Encode(msg) == nil && rc.Flush() == nil
	}
	if !send(models.MonitorMessage{Type: models.MonitorTypeSubscribed}) {
		return
	}
	for {
		var msg models.MonitorMessage
		select {
		case <-r.Context().Done():
			return
		case <-sub.Done():
			return
		case <-sub.Lost():
			msg = models.MonitorMessage{Type: models.MonitorTypeLost, Lost: sub.TakeLost()}
			if msg.Lost == 0 {
				continue
			}
		case ev := <-sub.Events():
			if n := sub.TakeLost(); n > 0 && !send(models.MonitorMessage{Type: models.MonitorTypeLost, Lost: n}) {
				return
			}
			msg = models.MonitorMessage{Type: ev.Type.String(), MonitorEvent: EventModel(ev)}
		}
		if !send(msg) {
			return
		}
	}
}

// EventModel converts a monitor event to its API form.
func EventModel(ev monitor.Event) *models.MonitorEvent {
	out := &models.MonitorEvent{
		Time:        ev.Time.UTC().Format(time.RFC3339Nano),
		Direction:   ev.Direction.String(),
		EndpointID:  ev.EndpointID,
		Source:      peerModel(uint32(ev.SrcIdentity), ev.SrcLabels, ev.Src),
		Destination: peerModel(uint32(ev.DstIdentity), ev.DstLabels, ev.Dst),
		Protocol:    monitor.ProtoName(ev.Proto),
		Length:      ev.Len,
	}
	if monitor.IsICMP(ev.Proto) { // the programs' "ports" are the echo id
		t := ev.ICMPType
		out.ICMPType = &t
		out.Source.Port, out.Destination.Port = 0, 0
	}
	if ev.Proto == policy.ProtoTCP {
		out.TCPFlags = monitor.TCPFlagNames(ev.TCPFlags)
	}
	switch ev.Type {
	case eventsmap.TypeDrop:
		out.Reason, out.ReasonCode = ev.Reason.String(), uint8(ev.Reason)
	case eventsmap.TypeTrace:
		out.Verdict, out.State = "forwarded", ev.CTState.String()
		if ev.Audited {
			out.Verdict = "audit"
		}
	case eventsmap.TypePolicyVerdict:
		out.Verdict, out.Match = "deny", ev.MatchType.String()
		switch {
		case ev.Allowed:
			out.Verdict = "allow"
		case ev.Audited: // denied by policy, let through by audit mode
			out.Verdict = "audit"
			out.Reason, out.ReasonCode = ev.Reason.String(), uint8(ev.Reason)
		default:
			out.Reason, out.ReasonCode = ev.Reason.String(), uint8(ev.Reason)
		}
	}
	return out
}

// peerModel is one end of a packet; frames that are not IP have no
// address.
func peerModel(id uint32, lbls labels.Labels, ap netip.AddrPort) models.MonitorPeer {
	p := models.MonitorPeer{Identity: id, Labels: LabelStrings(lbls), Port: ap.Port()}
	if ap.Addr().IsValid() {
		p.IP = ap.Addr().String()
	}
	return p
}

// LabelStrings formats labels as "source:key=value" strings (an empty
// list, not nil, for none).
func LabelStrings(lbls labels.Labels) []string {
	out := make([]string, 0, len(lbls))
	for _, l := range lbls {
		out = append(out, l.String())
	}
	return out
}
