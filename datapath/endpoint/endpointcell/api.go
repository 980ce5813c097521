package endpointcell

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/apiary-net/apiary/cells/api"
	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/k8s"
	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/datapath/endpoint"
	"github.com/apiary-net/apiary/datapath/endpoint/ipam"
	"github.com/apiary-net/apiary/datapath/endpoint/k8spods"
	"github.com/apiary-net/apiary/policy/policyapi"
)

// maxRequestBody bounds the body of PUT /v1/endpoint/{id}.
const maxRequestBody = 64 << 10

// listKind names the endpoint list in its continue tokens.
const listKind = "endpoint"

// parseID reads the {id} path value; the error names it.
func parseID(r *http.Request) (datapath.EndpointID, error) {
	s := r.PathValue("id")
	n, err := strconv.ParseUint(s, 10, 16)
	if err != nil || n == 0 {
		return 0, fmt.Errorf("path parameter id: %q is not an endpoint id (1 to 65535)", s)
	}
	return datapath.EndpointID(n), nil
}

type putParams struct {
	cell.In

	Manager   *endpoint.Manager
	K8sCaches k8s.CacheSync  `optional:"true"`
	Pods      k8spods.Source `optional:"true"`
}

// newPutHandler serves PUT /v1/endpoint/{id}: creates the endpoint (201
// with it); 400 names the wrong fields, 409 says the id is taken. With
// Kubernetes, an endpoint of a pod (k8s-namespace, k8s-pod-name) takes
// the pod's labels, and a request waits for the cache-sync gate first (as Cilium's does): the endpoint's
// first policy is computed from every policy of the API server.
func newPutHandler(p putParams) api.HandlerOut {
	m := p.Manager
	return api.NewHandlerOut(http.MethodPut, "/v1/endpoint/{id}", func(w http.ResponseWriter, r *http.Request) {
		id, err := parseID(r)
		if err != nil {
			api.WriteError(w, http.StatusBadRequest, err)
			return
		}
		data, err := io.ReadAll(io.LimitReader(r.Body, maxRequestBody+1))
		switch {
		case err != nil:
			api.WriteError(w, http.StatusBadRequest, fmt.Errorf("read body: %w", err))
			return
		case len(data) > maxRequestBody:
			api.WriteError(w, http.StatusRequestEntityTooLarge, fmt.Errorf("read body: larger than %d bytes", maxRequestBody))
			return
		}
		var req models.EndpointRequest
		if err := api.DecodeStrict(bytes.NewReader(data), &req); err != nil {
			api.WriteError(w, http.StatusBadRequest, fmt.Errorf("decode body: %w", err))
			return
		}
		if p.K8sCaches != nil {
			if err := p.K8sCaches.WaitForCacheSync(r.Context()); err != nil {
				api.WriteError(w, http.StatusServiceUnavailable, fmt.Errorf("wait for the Kubernetes caches: %w", err))
				return
			}
		}
		if req.PodName != "" && p.Pods != nil {
			ls, err := p.Pods.PodLabels(r.Context(), req.PodNamespace, req.PodName)
			if err != nil {
				api.WriteError(w, http.StatusServiceUnavailable, err)
				return
			}
			req.Labels = req.Labels[:0]
			for _, l := range ls {
				req.Labels = append(req.Labels, l.String())
			}
		}
		ports := make([]policyapi.NamedPort, 0, len(req.NamedPorts))
		for _, p := range req.NamedPorts {
			ports = append(ports, policyapi.NamedPort{Name: p.Name, Port: p.Port, Protocol: policyapi.Protocol(p.Protocol)})
		}
		ep, err := m.Create(r.Context(), endpoint.Request{ID: id, NetNSPath: req.NetNSPath, IfName: req.InterfaceName,
			Labels: req.Labels, IPv4: req.IPv4, IPv6: req.IPv6, NamedPorts: ports,
			ContainerID: req.ContainerID, PodNamespace: req.PodNamespace, PodName: req.PodName})
		var fe *endpoint.FieldError
		switch {
		case errors.Is(err, endpoint.ErrExists):
			api.WriteError(w, http.StatusConflict, err)
		case errors.As(err, &fe):
			api.WriteError(w, http.StatusBadRequest, err)
		case errors.Is(err, ipam.ErrNoCIDR), errors.Is(err, ipam.ErrFull), errors.Is(err, ipam.ErrRestoring),
			errors.Is(err, ipam.ErrWaitingForCIDR):
			// The node cannot give an address now: no pod CIDR (yet), all
			// taken, or the restored endpoints' not reserved yet.
			api.WriteError(w, http.StatusServiceUnavailable, err)
		case err != nil:
			api.WriteError(w, http.StatusInternalServerError, err)
		default:
			api.WriteJSON(w, http.StatusCreated, Model(ep))
		}
	})
}

// newDeleteHandler serves DELETE /v1/endpoint/{id}: 200 with the
// endpoint as it was.
func newDeleteHandler(m *endpoint.Manager) api.HandlerOut {
	return api.NewHandlerOut(http.MethodDelete, "/v1/endpoint/{id}", func(w http.ResponseWriter, r *http.Request) {
		id, err := parseID(r)
		if err != nil {
			api.WriteError(w, http.StatusBadRequest, err)
			return
		}
		ep, _ := m.Get(id)
		switch err := m.Delete(r.Context(), id); {
		case errors.Is(err, endpoint.ErrNotFound):
			api.WriteError(w, http.StatusNotFound, err)
		case err != nil:
			api.WriteError(w, http.StatusInternalServerError, err)
		default:
			ep.State = endpoint.StateDisconnecting
			api.WriteJSON(w, http.StatusOK, Model(ep))
		}
	})
}

// newGetHandler serves GET /v1/endpoint/{id}.
func newGetHandler(m *endpoint.Manager) api.HandlerOut {
	return api.NewHandlerOut(http.MethodGet, "/v1/endpoint/{id}", func(w http.ResponseWriter, r *http.Request) {
		id, err := parseID(r)
		if err != nil {
			api.WriteError(w, http.StatusBadRequest, err)
			return
		}
		ep, ok := m.Get(id)
		if !ok {
			api.WriteError(w, http.StatusNotFound, fmt.Errorf("endpoint %d: %w", id, endpoint.ErrNotFound))
			return
		}
		api.WriteJSON(w, http.StatusOK, Model(ep))
	})
}

// newListHandler serves GET /v1/endpoint: the endpoints sorted by id, a
// page at a time (?limit=, ?continue=; `apiary endpoint list`).
func newListHandler(m *endpoint.Manager) api.HandlerOut {
	return api.NewHandlerOut(http.MethodGet, "/v1/endpoint", func(w http.ResponseWriter, r *http.Request) {
		q, err := api.ParseListQuery(r, listKind)
		if err != nil {
			api.WriteError(w, http.StatusBadRequest, err)
			return
		}
		var after datapath.EndpointID
		if q.After != "" {
			n, err := strconv.ParseUint(q.After, 10, 16)
			if err != nil {
				api.WriteError(w, http.StatusBadRequest, fmt.Errorf("query parameter continue: %q is not an endpoint id", q.After))
				return
			}
			after = datapath.EndpointID(n)
		}
		page, more := m.EndpointsAfter(after, q.Limit)
		var cont string
		if more {
			cont = api.ContinueToken(listKind, strconv.Itoa(int(page[len(page)-1].ID)))
		}
		api.WriteList(w, api.ListPage[models.Endpoint]{
			ItemsName: "items",
			Items: func(yield func(models.Endpoint) bool) {
				for _, ep := range page {
					if !yield(Model(ep)) {
						return
					}
				}
			},
			Continue: cont,
		})
	})
}

// Model converts an endpoint to its API form.
func Model(e endpoint.Endpoint) models.Endpoint {
	out := models.Endpoint{
		ID: uint16(e.ID), NetNSPath: e.NetNSPath, InterfaceName: e.IfName, Labels: make([]string, 0, len(e.Labels)),
		Identity: uint32(e.Identity), State: string(e.State), Error: e.Error,
		Policy: models.EndpointPolicy{IngressEnforcement: e.IngressEnforcement, EgressEnforcement: e.EgressEnforcement,
			Revision: e.PolicyRevision, MapKeys: e.PolicyKeys},
		HostInterface: e.HostIfName, HostIfIndex: e.HostIfIndex, HostMAC: e.MAC, ContainerMAC: e.ContainerMAC,
		Created:     e.Created.UTC().Format(time.RFC3339),
		ContainerID: e.ContainerID, PodNamespace: e.Pod.Namespace, PodName: e.Pod.Name,
	}
	for _, l := range e.Labels {
		out.Labels = append(out.Labels, l.String())
	}
	for _, p := range e.NamedPorts {
		out.NamedPorts = append(out.NamedPorts, models.NamedPort{Name: p.Name, Port: p.Port, Protocol: string(p.Protocol)})
	}
	if e.IPv4.IsValid() {
		out.IPv4 = e.IPv4.String()
	}
	if e.IPv6.IsValid() {
		out.IPv6 = e.IPv6.String()
	}
	return out
}
