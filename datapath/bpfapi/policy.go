package bpfapi

import (
	"cmp"
	"errors"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"

	"github.com/apiary-net/apiary/cells/api"
	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/datapath/maps/policymap"
	"github.com/apiary-net/apiary/datapath/monitor"
	"github.com/apiary-net/apiary/policy"
)

// errNoPolicyMap is the answer for an endpoint without a policy map.
var errNoPolicyMap = errors.New("no BPF policy map")

// newPolicyHandler serves GET /v1/bpf/policy/{endpoint-id}: the entries
// of the endpoint's pinned policy map with the labels of each identity;
// 400 for an id that is not a number in 1-65535, 404 for an endpoint
// without a policy map.
func newPolicyHandler(m *maps) api.HandlerOut {
	return api.NewHandlerOut(http.MethodGet, "/v1/bpf/policy/{endpointID}", func(w http.ResponseWriter, r *http.Request) {
		s := r.PathValue("endpointID")
		id, err := strconv.ParseUint(s, 10, 16)
		if err != nil || id == 0 {
			api.WriteError(w, http.StatusBadRequest, fmt.Errorf("endpoint-id: %q is not an endpoint id (1-65535)", s))
			return
		}
		if !m.available(w) {
			return
		}
		out, err := m.policy(uint16(id))
		switch {
		case errors.Is(err, errNoPolicyMap):
			api.WriteError(w, http.StatusNotFound, fmt.Errorf("endpoint %d has no BPF policy map (no such endpoint on this node)", id))
		case err != nil:
			api.WriteError(w, http.StatusInternalServerError, err)
		default:
			api.WriteJSON(w, http.StatusOK, out)
		}
	})
}

// policy reads endpoint id's policy map.
func (m *maps) policy(id uint16) (*models.BPFPolicy, error) {
	pm, err := policymap.OpenPinned(m.root, id)
	if errors.Is(err, os.ErrNotExist) {
		return nil, errNoPolicyMap
	}
	if err != nil {
		return nil, err
	}
	defer pm.Close()
	entries, err := pm.Dump()
	if err != nil {
		return nil, err
	}
	slices.SortFunc(entries, func(a, b policymap.DumpEntry) int {
		return cmp.Or(cmp.Compare(a.Key.Direction, b.Key.Direction), cmp.Compare(a.Key.Identity, b.Key.Identity),
			cmp.Compare(a.Key.Proto, b.Key.Proto), cmp.Compare(a.Key.Port, b.Key.Port), cmp.Compare(a.Key.PrefixLen, b.Key.PrefixLen))
	})
	out := &models.BPFPolicy{EndpointID: id, Entries: make([]models.BPFPolicyEntry, 0, len(entries))}
	for _, e := range entries {
		out.Entries = append(out.Entries, m.policyEntry(e))
	}
	return out, nil
}

func (m *maps) policyEntry(e policymap.DumpEntry) models.BPFPolicyEntry {
	k := e.Key
	out := models.BPFPolicyEntry{
		Policy: "Allow", Direction: "Ingress", Identity: uint32(k.Identity), Labels: []string{},
		Protocol: monitor.ProtoName(k.Proto), Port: k.Port, PortPrefixLen: k.PrefixLen,
		PortRange: PortRange(k), Bytes: e.Bytes, Packets: e.Packets,
	}
	if e.Deny {
		out.Policy = "Deny"
	}
	if k.Direction == policy.Egress {
		out.Direction = "Egress"
	}
	if k.Identity != 0 {
		if i := m.ids.LookupIdentityByID(k.Identity); i != nil {
			for _, l := range i.Labels {
				out.Labels = append(out.Labels, l.String())
			}
		}
	}
	return out
}

// PortRange formats the ports a policy key covers: "ANY" (every
// protocol), "ANY/TCP" (every port), "80/TCP", "8080-8087/TCP" (a
// prefix of the port), "8/ICMP" (an ICMP type).
func PortRange(k policy.Key) string {
	proto := monitor.ProtoName(k.Proto)
	switch {
	case k.Proto == policy.ProtoAny:
		return "ANY"
	case k.PrefixLen == 0:
		return "ANY/" + proto
	case k.PrefixLen >= 16:
		return fmt.Sprintf("%d/%s", k.Port, proto)
	}
	mask := ^uint16(0) << (16 - k.PrefixLen)
	first := k.Port & mask
	return fmt.Sprintf("%d-%d/%s", first, first|^mask, proto)
}
