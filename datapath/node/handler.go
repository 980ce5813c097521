package node

import (
	"context"
	"log/slog"
	"time"

	"github.com/apiary-net/apiary/cells/cell"
)

// ValidateInterval is how often every node handler checks every node
// (NodeValidateImplementation).
const ValidateInterval = 2 * time.Minute

// NodeHandler is told about nodes: the datapath programs routes, tunnels
// and encryption from it. Calls are made one at a time, in the order of
// the changes; a handler must not call back into NodeUpdated or
// NodeDeleted.
type NodeHandler interface {
	// Name names the handler in logs and health.
	Name() string
	// NodeAdd is called for a node that appeared.
	NodeAdd(n Node) error
	// NodeUpdate is called for a node that changed.
	NodeUpdate(old, updated Node) error
	// NodeDelete is called for a node that went away.
	NodeDelete(n Node) error
	// NodeValidateImplementation is called for every node every
	// ValidateInterval, so the handler can repair what drifted.
	NodeValidateImplementation(n Node) error
}

// handlerSet calls the handlers and keeps each one's health.
type handlerSet struct {
	handlers []NodeHandler
	health   []cell.Health
	log      *slog.Logger
}

func newHandlerSet(handlers []NodeHandler, health cell.Health, log *slog.Logger) *handlerSet {
	s := &handlerSet{log: log}
	for _, h := range handlers {
		if h == nil {
			continue
		}
		s.handlers = append(s.handlers, h)
		s.health = append(s.health, health.NewScope("handler-"+h.Name()))
	}
	return s
}

// each calls fn for every handler, logging failures with the node.
func (s *handlerSet) each(call string, n *Node, fn func(NodeHandler) error) {
	for i, h := range s.handlers {
		if err := fn(h); err != nil {
			s.log.Warn("Node handler failed", "handler", h.Name(), "call", call, "node", n.GetKeyName(), "error", err)
			s.health[i].Degraded(call+" of "+n.GetKeyName()+" failed", err)
			continue
		}
		s.health[i].OK(call + " of " + n.GetKeyName() + " succeeded")
	}
}

func (s *handlerSet) add(n Node) {
	s.each("NodeAdd", &n, func(h NodeHandler) error { return h.NodeAdd(n) })
}

func (s *handlerSet) update(old, updated Node) {
	s.each("NodeUpdate", &updated, func(h NodeHandler) error { return h.NodeUpdate(old, updated) })
}

func (s *handlerSet) remove(n Node) {
	s.each("NodeDelete", &n, func(h NodeHandler) error { return h.NodeDelete(n) })
}

func (s *handlerSet) validate(ctx context.Context, nodes []Node) {
	for _, n := range nodes {
		if ctx.Err() != nil {
			return
		}
		s.each("NodeValidateImplementation", &n, func(h NodeHandler) error { return h.NodeValidateImplementation(n) })
	}
}
