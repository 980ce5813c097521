package policy

// ConsumeMapState returns a copy of the current map state and forgets
// the pending changes, in one step: the next ConsumeMapChanges returns
// the changes since this copy. A datapath writes the copy in full (a new
// endpoint, a policy of a new revision) and the deltas after it; taking
// MapState and ConsumeMapChanges separately could lose a change made
// between the two.
func (ep *EndpointPolicy) ConsumeMapState() MapState {
	var out MapState
	ep.sp.cache.Locked(func() {
		out = ep.mapStateLocked()
		ep.forgetChangesLocked()
	})
	return out
}
