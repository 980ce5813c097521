package kvstore

import "fmt"

// EventType says what happened to a key.
type EventType int

// Event types. ListDone carries no key: it marks the end of the initial
// list.
const (
	EventCreate EventType = iota
	EventModify
	EventDelete
	EventListDone
)

func (t EventType) String() string {
	switch t {
	case EventCreate:
		return "create"
	case EventModify:
		return "modify"
	case EventDelete:
		return "delete"
	case EventListDone:
		return "list-done"
	}
	return fmt.Sprintf("EventType(%d)", int(t))
}

// Event is one change under a watched prefix.
type Event struct {
	Type  EventType
	Key   string
	Value []byte
	// Name is Key below the watched prefix when the backend gives it
	// (etcd's does): the backend keeps this string for as long as it
	// knows the key, so a reader that keeps the name too shares it
	// rather than holding the whole key a second time.
	Name string
}
