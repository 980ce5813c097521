// Command hubblebench drives datapath events through the agent's reader
// at a fixed rate and reports what arrived and what it cost: an agent
// with Hubble enabled (package datapath/hubble/hubbletest: the real BPF
// programs, the monitor's ring-buffer reader, the hubble cell) gets
// drop events written by the endpoint's program itself, run with
// BPF_PROG_TEST_RUN in batches paced to -rate events per second. It
// prints the events sent, read off the ring buffer and turned into
// flows, the events lost in the kernel ring buffer and in the observer's
// queue, and the agent's CPU time per 10,000 flows (the process's CPU
// time minus the generating thread's, which runs the programs).
//
//	cd hack/bench && go run ./cmd/hubblebench              # 100,000 events/s for 3 s
package main
