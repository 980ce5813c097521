package plugin

import (
	"hash/fnv"
	"math"
)

// maxEndpointID is the largest endpoint id of the API (ids are 1 to
// 65535).
const maxEndpointID = math.MaxUint16

// preferredID is the endpoint id a container interface starts probing
// at: a hash of the container id and interface name, so the same
// container gets the same id whenever it is free.
func preferredID(containerID, ifName string) uint16 {
	h := fnv.New32a()
	_, _ = h.Write([]byte(containerID))
	_, _ = h.Write([]byte{0})
	_, _ = h.Write([]byte(ifName))
	return uint16(h.Sum32()%maxEndpointID) + 1
}

// candidateIDs yields the ids from preferredID on, wrapping around, that
// are not in used; at most limit of them.
func candidateIDs(start uint16, used map[uint16]bool, limit int) []uint16 {
	var out []uint16
	id := int(start)
	for range maxEndpointID {
		if !used[uint16(id)] {
			out = append(out, uint16(id))
			if len(out) == limit {
				break
			}
		}
		id = id%maxEndpointID + 1
	}
	return out
}
