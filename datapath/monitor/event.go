package monitor

import (
	"time"

	"github.com/apiary-net/apiary/datapath/maps/eventsmap"
	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/labels"
)

// Event is a datapath event with the labels of its identities.
type Event struct {
	eventsmap.Event
	// Time is when the monitor read the event.
	Time time.Time
	// SrcLabels and DstLabels are the labels of SrcIdentity and
	// DstIdentity (nil when the identity is not known).
	SrcLabels, DstLabels labels.Labels
}

// Identities looks identities up by number; identity.Allocator is one.
type Identities interface {
	LookupIdentityByID(id identity.NumericIdentity) *identity.Identity
}

// Types selects event types; the zero value selects drops and policy
// verdicts. Traces of forwarded packets are selected only when asked for:
// they are many, and the programs write them only while someone listens.
type Types struct {
	Drop, PolicyVerdict, Trace bool
}

// AllTypes selects drops and policy verdicts (the zero value's types).
var AllTypes = Types{Drop: true, PolicyVerdict: true}

// has reports whether t selects events of type typ.
func (t Types) has(typ eventsmap.Type) bool {
	if t == (Types{}) {
		t = AllTypes
	}
	switch typ {
	case eventsmap.TypeDrop:
		return t.Drop
	case eventsmap.TypePolicyVerdict:
		return t.PolicyVerdict
	case eventsmap.TypeTrace:
		return t.Trace
	}
	return false
}

// enrich adds the labels of ev's identities.
func enrich(ids Identities, ev eventsmap.Event, now time.Time) Event {
	out := Event{Event: ev, Time: now}
	out.SrcLabels = labelsOf(ids, ev.SrcIdentity)
	out.DstLabels = labelsOf(ids, ev.DstIdentity)
	return out
}

func labelsOf(ids Identities, id identity.NumericIdentity) labels.Labels {
	if ids == nil {
		return nil
	}
	if i := ids.LookupIdentityByID(id); i != nil {
		return i.Labels
	}
	return nil
}
